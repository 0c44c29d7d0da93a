/** Internal token: the console's resolved options. */
export const CONSOLE_OPTIONS = Symbol('parse-agent:console-options');
