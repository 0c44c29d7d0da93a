import { Module, type DynamicModule } from '@nestjs/common';
import { ParseAgentConfigError } from '../../core/errors';
import { ConsoleActivity } from './console-activity';
import { ConsoleAgents } from './console-agents';
import { ConsoleLive } from './console-live';
import { ConsolePreAuthGuard } from './console-pre-auth.guard';
import { consoleAsset } from './console-assets';
import { CONSOLE_OPTIONS } from './console.constants';
import { createConsoleControllers } from './console.controller';
import type { ParseAgentConsoleOptions, ResolvedConsoleOptions } from './console-options';

/**
 * An optional browser console for ParseAgentModule: who the caller's agent acts for, what it may
 * see and do and why not, a form to run its tools, (for the operator) a live feed of tool calls,
 * and with the `liveQuery` option a class count that updates live for the signed-in identity.
 * Mount it behind the same guards as the MCP endpoint:
 * `ParseAgentConsoleModule.forRoot({ path: '/console', guards: [ParseAgentAuthGuard] })`.
 * Needs ParseAgentModule.forRoot (global, with `agentFactory`) in the same application.
 */
@Module({})
export class ParseAgentConsoleModule {
  static forRoot(options: ParseAgentConsoleOptions): DynamicModule {
    const resolved = resolveConsoleOptions(options);
    // A missing page is a packaging fault: say so at startup, not on the first visit.
    consoleAsset('index.html');
    consoleAsset('console.js');
    consoleAsset('console-live.js');
    return {
      module: ParseAgentConsoleModule,
      controllers: createConsoleControllers(resolved),
      providers: [
        { provide: CONSOLE_OPTIONS, useValue: resolved },
        ConsoleAgents,
        ConsoleActivity,
        ConsoleLive,
        ConsolePreAuthGuard,
      ],
    };
  }
}

export function resolveConsoleOptions(options: ParseAgentConsoleOptions): ResolvedConsoleOptions {
  if (!options || !Array.isArray(options.guards) || options.guards.length === 0) {
    throw new ParseAgentConfigError(
      'ParseAgentConsoleModule.forRoot needs guards: the host guards that identify the caller, the same as the MCP endpoint (e.g. { guards: [ParseAgentAuthGuard] }). The console serves data only behind them.',
    );
  }
  const path = `/${(options.path ?? '/console').replace(/^\/+|\/+$/g, '')}`;
  if (path === '/' || !/^\/[A-Za-z0-9._~\-/]+$/.test(path)) {
    throw new ParseAgentConfigError(
      `ParseAgentConsoleModule.forRoot: path must be a non-root URL path such as '/console' (got ${JSON.stringify(options.path)}).`,
    );
  }
  const history = options.activityHistory ?? 200;
  if (!Number.isInteger(history) || history < 0) {
    throw new ParseAgentConfigError(
      `ParseAgentConsoleModule.forRoot: activityHistory must be a whole number of entries, 0 or more (got ${JSON.stringify(options.activityHistory)}).`,
    );
  }
  const preAuth = options.preAuthRateLimiter;
  if (
    preAuth !== undefined &&
    preAuth !== false &&
    typeof (preAuth as { check?: unknown })?.check !== 'function'
  ) {
    throw new ParseAgentConfigError(
      'ParseAgentConsoleModule.forRoot: preAuthRateLimiter must have a check(key) method (a RateLimiter), or be false to turn it off.',
    );
  }
  return {
    path,
    guards: [...options.guards],
    signIn: options.signIn ?? true,
    activityHistory: history,
    isOperator: options.isOperator,
    callerOf: options.callerOf,
    actorOf: options.actorOf,
    signInRateLimiter: options.signInRateLimiter,
    preAuthRateLimiter: preAuth,
  };
}
