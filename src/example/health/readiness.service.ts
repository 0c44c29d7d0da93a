import { Inject, Injectable } from '@nestjs/common';
import type { ParseConnectionConfig } from 'nestjs-parse-agent';
import { checkParseServer } from 'nestjs-parse-agent/ops';

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  /** What is not ready, in words an operator can act on. */
  notReady: string[];
}

/** Injection token of the Parse connection (master key) the demo's own checks use. */
export const DEMO_PARSE_CONNECTION = Symbol('DEMO_PARSE_CONNECTION');

const CHECK_TIMEOUT_MS = 2_000;
/** Probes are cached briefly: a load balancer polling every second must not load Parse. */
const CACHE_MS = 1_000;

/**
 * Whether the demo can serve a user right now: Parse Server reachable and accepting the master key
 * (which also proves its database answers), the demo data seeded (embedded mode), not shutting down.
 */
@Injectable()
export class ReadinessService {
  protected seeded = false;
  protected stopping = false;
  protected cached?: { at: number; problems: string[] };

  constructor(@Inject(DEMO_PARSE_CONNECTION) protected readonly parse: ParseConnectionConfig) {}

  markSeeded(): void {
    this.seeded = true;
  }

  markShuttingDown(): void {
    this.stopping = true;
  }

  async report(): Promise<ReadinessReport> {
    const notReady: string[] = [];
    if (this.stopping) notReady.push('shutting down');
    if (!this.seeded) notReady.push('startup: demo data not seeded and login not verified yet');
    notReady.push(...(await this.parseProblems()));
    return { status: notReady.length ? 'not_ready' : 'ready', notReady };
  }

  protected async parseProblems(): Promise<string[]> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.problems;
    const problems = await checkParse(this.parse);
    this.cached = { at: Date.now(), problems };
    return problems;
  }
}

/**
 * One master-key read of Parse's schemas (the library's `checkParseServer`): fails when Parse
 * Server is down or slow, when its database is down, and when the master key is wrong. Never
 * includes the key in what it says.
 */
export async function checkParse(parse: ParseConnectionConfig): Promise<string[]> {
  const check = await checkParseServer(parse, { timeoutMs: CHECK_TIMEOUT_MS });
  if (check.ok) return [];
  if (check.problem === 'master_key_refused') return [`parse: ${check.message} (PARSE_MASTER_KEY)`];
  return [`parse: ${check.message}`];
}
