import 'reflect-metadata';
import type { CanActivate } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { firstValueFrom, take, toArray } from 'rxjs';
import { AgentEvents, type ToolCallEvent } from '../../core/agent-events';
import { ParseAgentConfigError } from '../../core/errors';
import { ParseAgentModule } from '../parse-agent.module';
import { ConsoleActivity, type ConsoleActivityEntry } from './console-activity';
import { ConsolePreAuthGuard } from './console-pre-auth.guard';
import type { ResolvedConsoleOptions } from './console-options';
import { ParseAgentConsoleModule, resolveConsoleOptions } from './parse-agent-console.module';

const allow: CanActivate = { canActivate: () => true };
const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

function toolCall(overrides: Partial<ToolCallEvent> = {}): ToolCallEvent {
  return {
    tool: 'count_objects',
    args_keys: ['class_name'],
    auth_type: 'session_token',
    using_master_key: false,
    permissions: 'readonly',
    agent_id: 'agent-1',
    agent_depth: 0,
    success: true,
    duration_ms: 12,
    ...overrides,
  };
}

function activity(options: Partial<ResolvedConsoleOptions> = {}) {
  const events = new AgentEvents();
  const feed = new ConsoleActivity(events, {
    ...resolveConsoleOptions({ guards: [allow] }),
    ...options,
  });
  return { events, feed };
}

describe('resolveConsoleOptions', () => {
  it('refuses a console without host guards (it would serve data to anyone)', () => {
    expect(() => resolveConsoleOptions({ guards: [] })).toThrow(ParseAgentConfigError);
    expect(() => resolveConsoleOptions({ guards: [] })).toThrow(/guards: \[ParseAgentAuthGuard\]/);
    expect(() => resolveConsoleOptions(undefined as never)).toThrow(ParseAgentConfigError);
  });

  it('normalises the path and refuses the root or odd characters', () => {
    expect(resolveConsoleOptions({ guards: [allow] }).path).toBe('/console');
    expect(resolveConsoleOptions({ guards: [allow], path: 'admin/agent-console/' }).path).toBe(
      '/admin/agent-console',
    );
    expect(() => resolveConsoleOptions({ guards: [allow], path: '/' })).toThrow(/non-root/);
    expect(() => resolveConsoleOptions({ guards: [allow], path: '/a b' })).toThrow(/path/);
  });

  it('keeps sign-in on by default and checks the history size', () => {
    expect(resolveConsoleOptions({ guards: [allow] }).signIn).toBe(true);
    expect(() => resolveConsoleOptions({ guards: [allow], activityHistory: -1 })).toThrow(
      /activityHistory/,
    );
  });
});

describe('ConsoleActivity', () => {
  it('names the actor with the host hook, run inside the emitting call', async () => {
    let current = 'alice (acme)';
    const { events, feed } = activity({ actorOf: () => current });
    const seen = firstValueFrom(feed.feed().pipe(take(2), toArray()));
    events.emit(toolCall());
    current = 'operator';
    events.emit(
      toolCall({ success: false, error_code: 'access_denied', denial_kind: 'tenant_scope' }),
    );
    const [first, second] = await seen;
    expect(first).toMatchObject({ actor: 'alice (acme)', tool: 'count_objects', outcome: 'ok' });
    expect(second).toMatchObject({ actor: 'operator', outcome: 'access_denied/tenant_scope' });
    feed.onModuleDestroy();
  });

  it('falls back to the console-known caller, then the auth type; a throwing hook names no one', () => {
    const { events, feed } = activity({
      actorOf: () => {
        throw new Error('no context');
      },
    });
    feed.remember('agent-7', 'bob (globex)');
    const entries: ConsoleActivityEntry[] = [];
    feed.feed().subscribe((e) => entries.push(e));
    events.emit(toolCall({ agent_id: 'agent-7' }));
    events.emit(toolCall({ agent_id: 'agent-8', auth_type: 'master_key' }));
    expect(entries.map((e) => e.actor)).toEqual(['bob (globex)', 'master_key agent (readonly)']);
    feed.onModuleDestroy();
  });

  it('replays recent history to a feed opened later, bounded, and carries no argument values', () => {
    const { events, feed } = activity({ activityHistory: 2 });
    events.emit(toolCall({ tool: 'a' }));
    events.emit(toolCall({ tool: 'b' }));
    events.emit(toolCall({ tool: 'c' }));
    events.emitMutation({
      action: 'update',
      tool: 'update_object',
      agent_id: 'agent-1',
      auth_type: 'master_key',
      using_master_key: true,
      permissions: 'write',
      class_name: 'Order',
      object_id: 'o1',
      changed_keys: ['status'],
      at: '2026-01-01T00:00:00.000Z',
    });
    const entries: ConsoleActivityEntry[] = [];
    feed.feed().subscribe((e) => entries.push(e));
    expect(entries.map((e) => e.tool)).toEqual(['c', 'update_object']);
    expect(entries[1]).toMatchObject({
      kind: 'mutation',
      action: 'update',
      outcome: 'changed',
      class_name: 'Order',
      changed_keys: ['status'],
    });
    expect(JSON.stringify(entries)).not.toContain('args');
    feed.onModuleDestroy();
  });
});

describe('ParseAgentConsoleModule', () => {
  it('refuses to start without the agentFactory the MCP endpoint uses', async () => {
    const build = Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({ parse }),
        ParseAgentConsoleModule.forRoot({ guards: [allow] }),
      ],
    }).compile();
    await expect(build).rejects.toThrow(/agentFactory/);
  });

  it('builds with the module and mounts page and API controllers at the path', async () => {
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({ parse, agentFactory: () => ({}) }),
        ParseAgentConsoleModule.forRoot({ path: '/ops/console', guards: [allow] }),
      ],
    }).compile();
    const definition = ParseAgentConsoleModule.forRoot({ path: '/ops/console', guards: [allow] });
    const paths = (definition.controllers ?? []).map((c) => Reflect.getMetadata('path', c));
    expect(paths).toEqual(['/ops/console', '/ops/console/api']);
    const guarded = (definition.controllers ?? []).map(
      (c) => (Reflect.getMetadata('__guards__', c) as unknown[] | undefined) ?? [],
    );
    // The page and sign-in carry no data; every data endpoint sits behind the host's guards,
    // after the pre-auth limit.
    expect(guarded).toEqual([[], [ConsolePreAuthGuard, allow]]);
    expect(module.get(ConsoleActivity)).toBeInstanceOf(ConsoleActivity);
    await module.close();
  });
});
