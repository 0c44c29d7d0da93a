/** Where the HTTP transport reports problems (Nest's Logger fits; so does console). */
export interface TransportLogger {
  warn(message: string): void;
  error(message: string, trace?: string): void;
  log?(message: string): void;
}
