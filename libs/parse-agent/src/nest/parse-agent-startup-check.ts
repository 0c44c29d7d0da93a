import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ParseAgentConfigError } from '../core/errors';
import type { OpenedDataPath } from '../data/data-path-descriptor';
import { printClassAs } from '../core/secret-display';
import { PARSE_AGENT_COMPOSITION } from './parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';
import { probeParse } from '../data/parse-rest/parse-server-probe';
import { redactedEndpoint, type ProbeOutcome } from '../data/probe';
import {
  resolveStartupCheck,
  startupCheckError,
  type ResolvedStartupCheck,
} from '../composition/startup-check';

type Problem = Extract<ProbeOutcome, { ok: false }>;

export interface StartupCheckStatus {
  /** `checking` until every probe answered (or Parse Server was waited for long enough). */
  state: 'checking' | 'ok' | 'failed';
  /** One line per wrong setting, starting with its name (`parse.masterKey: ...`). */
  problems: string[];
}

/** Delays between attempts to reach Parse Server: quick at first, then every few seconds. */
const RETRY_DELAYS_MS = [100, 250, 500, 1_000, 2_000];
const RETRY_AFTER_GIVING_UP_MS = 5_000;
/** How long Parse Server may be unreachable at boot before the check says it is waiting. */
const ANNOUNCE_WAIT_AFTER_MS = 2_000;

/**
 * Verifies the configuration at bootstrap, so a wrong setting is one clear message naming it
 * instead of failures on every call later: the master key (a master-key-only read), each direct
 * database path (one query), all with a time limit. With `startupCheck: 'fail'` (the default) a
 * wrong setting fails the boot. A Parse Server that cannot be reached yet is waited for in the
 * background (an app that mounts Parse Server itself serves it only after boot); `ready()` settles
 * once it answered, for a readiness probe to await.
 */
@Injectable()
export class ParseAgentStartupCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger('ParseAgent');
  protected readonly settings: ResolvedStartupCheck;
  protected state: StartupCheckStatus['state'] = 'checking';
  protected problems: Problem[] = [];
  protected running?: Promise<void>;
  protected stopped = false;
  protected retryTimer?: NodeJS.Timeout;
  protected readonly readyPromise: Promise<void>;
  protected settleReady!: (error?: ParseAgentConfigError) => void;
  protected readonly parsePromise: Promise<boolean>;
  protected settleParse!: (answered: boolean) => void;

  constructor(
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
    // Only the paths it probes: the whole AgentComposition's types would pull the optional
    // peers' (ioredis) into the root entry point's declarations.
    @Inject(PARSE_AGENT_COMPOSITION)
    protected readonly composition: { readonly opened: readonly OpenedDataPath[] },
  ) {
    this.settings = resolveStartupCheck(options.startupCheck);
    this.readyPromise = new Promise<void>((resolve, reject) => {
      let settled = false;
      this.settleReady = (error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
    });
    // Nobody need await ready(): a rejection nobody asked for is not an unhandled one.
    this.readyPromise.catch(() => undefined);
    this.parsePromise = new Promise<boolean>((resolve) => {
      let settled = false;
      this.settleParse = (answered) => {
        if (settled) return;
        settled = true;
        resolve(answered);
      };
    });
  }

  /**
   * Resolves once every check passed (with `'warn'`: once every check finished, problems logged).
   * With `'fail'` it rejects with the ParseAgentConfigError naming the setting, including when
   * Parse Server could not be reached within `startupCheck.parseWaitMs`.
   */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Where the check stands, for a readiness endpoint. */
  status(): StartupCheckStatus {
    return {
      state: this.state,
      problems: this.problems.map((p) => `${p.setting}: ${p.message}`),
    };
  }

  /**
   * Resolves true once Parse Server answered the master key (at once with `'off'`), false when the
   * check gave up on it: boot-time reports that read Parse wait for this instead of warning about
   * a server that is simply not listening yet.
   */
  parseAnswered(): Promise<boolean> {
    return this.parsePromise;
  }

  onApplicationBootstrap(): Promise<void> {
    return this.run();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.settleParse(false);
  }

  /** Runs the check once (later calls share the first run). */
  run(): Promise<void> {
    return (this.running ??= this.check());
  }

  protected async check(): Promise<void> {
    const { mode, timeoutMs } = this.settings;
    if (mode === 'off') {
      this.state = 'ok';
      this.settleParse(true);
      this.settleReady();
      return;
    }
    // Parse Server, then each built-in database path the options configure (one query each).
    const [parseOutcome, ...databases] = await Promise.all([
      probeParse(this.options.parse, timeoutMs),
      ...this.composition.opened.map((path) => path.probe(timeoutMs)),
    ]);
    const found = [parseOutcome, ...databases].filter(
      (o): o is Problem => !o.ok && !(o === parseOutcome && o.transient),
    );
    if (found.length) {
      this.problems.push(...found);
      if (!parseOutcome.ok && !parseOutcome.transient) this.settleParse(false);
      if (mode === 'fail') {
        const error = startupCheckError(found);
        this.fail(error);
        throw error;
      }
      for (const p of found) this.logger.warn(`Start-up check: ${p.setting}: ${p.message}`);
    }
    if (parseOutcome.ok) this.parseOk();
    else if (parseOutcome.transient) this.waitForParse();
    else this.finish();
  }

  /** Parse Server is not answering yet: try again in the background, quietly until the deadline. */
  protected waitForParse(): void {
    const startedAt = Date.now();
    const giveUpAt = startedAt + this.settings.parseWaitMs;
    let attempt = 0;
    let reported: Problem | undefined;
    let announced = false;
    const next = () => {
      if (this.stopped) return;
      const delay = reported
        ? RETRY_AFTER_GIVING_UP_MS
        : RETRY_DELAYS_MS[Math.min(attempt++, RETRY_DELAYS_MS.length - 1)];
      this.retryTimer = setTimeout(() => void tryAgain(), delay);
      this.retryTimer.unref();
    };
    const tryAgain = async () => {
      const outcome = await probeParse(this.options.parse, this.settings.timeoutMs);
      if (this.stopped) return;
      if (outcome.ok) {
        if (reported) {
          this.logger.log(
            `Start-up check: Parse Server at ${redactedEndpoint(this.options.parse.serverURL)} answers now.`,
          );
          this.problems = this.problems.filter((p) => p !== reported);
        }
        return this.parseOk();
      }
      if (!outcome.transient) return this.parseFailed(outcome);
      // An app that mounts Parse Server itself serves it within a moment of booting; past that,
      // say what is awaited and why, once, rather than stay silent until the check gives up.
      if (!announced && !reported && Date.now() - startedAt >= ANNOUNCE_WAIT_AFTER_MS) {
        announced = true;
        const where = redactedEndpoint(this.options.parse.serverURL);
        const cause = waitCause(outcome.message);
        this.logger.log(
          `Start-up check: waiting for Parse Server at ${where} (${cause}); tool calls fail until it answers. Giving up after ${Math.round(this.settings.parseWaitMs / 1_000)} s.`,
        );
      }
      if (!reported && Date.now() >= giveUpAt) {
        const ms = this.settings.parseWaitMs;
        const waited = ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 1_000)} s`;
        reported = { ...outcome, message: `${outcome.message} (still so after ${waited})` };
        this.parseFailed(reported);
      }
      next();
    };
    next();
  }

  protected parseOk(): void {
    this.settleParse(true);
    this.finish();
  }

  /** A problem found after boot: logged (an error with 'fail'), and readiness refused. */
  protected parseFailed(problem: Problem): void {
    this.problems.push(problem);
    this.settleParse(false);
    if (this.settings.mode === 'fail') {
      this.logger.error(`Start-up check: ${problem.setting}: ${problem.message}`);
      this.fail(startupCheckError([problem]));
    } else {
      this.logger.warn(`Start-up check: ${problem.setting}: ${problem.message}`);
      this.finish();
    }
  }

  protected fail(error: ParseAgentConfigError): void {
    this.state = 'failed';
    this.settleReady(error);
  }

  /** Every probe has answered: ready, unless a problem remains and the mode is 'fail'. */
  protected finish(): void {
    this.state = this.problems.length && this.settings.mode === 'fail' ? 'failed' : 'ok';
    if (this.state === 'ok') this.settleReady();
  }
}

/** The cause in a transient probe message: `ECONNREFUSED`, `HTTP 503`, `no answer within 5000 ms`. */
function waitCause(message: string): string {
  return (
    /cannot be reached \(([^)]+)\)/.exec(message)?.[1] ??
    /answers (HTTP \d+)/.exec(message)?.[1] ??
    /did not (answer within \d+ ms)/.exec(message)?.[1].replace(/^answer/, 'no answer') ??
    'no answer'
  );
}

// Holds the module options.
printClassAs(ParseAgentStartupCheck);
