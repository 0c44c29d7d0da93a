import type { Logger } from '@nestjs/common';

/** How long a start-up step interrupted by a signal may take to finish before the process exits. */
const STARTUP_STOP_LIMIT_MS = 30_000;

/** Start-up stopped at a step boundary because a signal asked for it: not a failure. */
export class StartupInterrupted extends Error {
  override name = 'StartupInterrupted';
}

/**
 * SIGINT, SIGTERM and SIGHUP are the demo's from its first line. During start-up one stops it at the next
 * step boundary (a step half done, such as initdb or the seed, is never torn down under itself);
 * once the demo is up, the stop function it registered drains and shuts down.
 */
export class StartupSignals {
  /** The signal received during start-up, if any. */
  received?: string;
  protected stop?: (signal: string) => Promise<void>;

  constructor(protected readonly logger: Logger) {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
    // A closed terminal: PostgreSQL, in its own process group, would not hear of it.
    process.on('SIGHUP', this.onSignal);
  }

  /** Throws StartupInterrupted when a signal came during start-up. */
  checkpoint(): void {
    if (this.received) throw new StartupInterrupted();
  }

  /** Start-up is over: later signals call `stop`, and a signal that came meanwhile calls it now. */
  async running(stop: (signal: string) => Promise<void>): Promise<void> {
    this.stop = stop;
    if (this.received) await stop(this.received);
  }

  protected readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.stop) return void this.stop(signal);
    if (this.received) return;
    this.received = signal;
    this.logger.log(`${signal} received during start-up; stopping once the current step is done`);
    setTimeout(() => {
      this.logger.error(`Start-up did not stop within ${STARTUP_STOP_LIMIT_MS} ms; exiting anyway`);
      process.exit(1);
    }, STARTUP_STOP_LIMIT_MS).unref();
  };
}
