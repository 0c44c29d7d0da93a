import type { DataPath, DataPathProvider } from '../ports/data-path';
import { InMemoryEventStore } from '../ports/in-memory-event-store';
import type { LlmProvider } from '../ports/llm-provider';
import type { ResolvedMcpEndpointOptions } from '../transport/http/mcp-endpoint-options';
import { composeAgentServices } from './compose-agent-services';
import { createAgentServices } from './create-agent-services';
import { createEventStore } from './mcp-endpoint-stores';

const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

function ownPath(kind: string): DataPathProvider & { closed: number } {
  return {
    kind,
    closed: 0,
    refusal: () => undefined,
    bind: () => ({ kind }) as DataPath,
    close() {
      this.closed++;
    },
  };
}

const llm: LlmProvider = {
  name: 'fake',
  model: 'fake-1',
  complete: async () => ({
    text: '',
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    model: 'fake-1',
  }),
};

describe('composeAgentServices', () => {
  it('gives a dataPathProviders function the library’s paths, and uses what it returns', async () => {
    const mine = ownPath('mine');
    let seen: string[] = [];
    const built = composeAgentServices({
      parse,
      dataPathProviders: (paths) => {
        seen = paths.map((p) => p.kind);
        return [mine, ...paths];
      },
    });
    expect(seen).toEqual(['parse-rest', 'acl-scoped-write']);
    expect(built.dataPathProviders.map((p) => p.kind)).toEqual([
      'mine',
      'parse-rest',
      'acl-scoped-write',
    ]);
    await built.close();
    // An application's provider is closed by the application.
    expect(mine.closed).toBe(0);
  });

  it('replaces the library’s paths with a list, building none of them', () => {
    const mine = ownPath('mine');
    const built = composeAgentServices({ parse, dataPathProviders: [mine] });
    expect(built.dataPathProviders).toEqual([mine]);
    expect(built.opened).toEqual([]);
    void built.close();
  });

  it('takes llmProvider as the model, and refuses it next to llm', () => {
    const built = composeAgentServices({ parse, llmProvider: llm });
    expect(built.llm).toBe(llm);
    expect(built.services.conversations).toBeDefined();
    void built.close();
    expect(() =>
      composeAgentServices({ parse, llmProvider: llm, llm: { provider: 'openai' } }),
    ).toThrow(/createAgentServices: pass the language model once/);
  });

  it('takes a provider object only as llmProvider: llm is the settings (one option per port)', () => {
    expect(() => composeAgentServices({ parse, llm: llm as never })).toThrow(
      /llm takes the language model settings .*pass an LlmProvider object as llmProvider/,
    );
  });

  it('reads no model when conversations are given or turned off', () => {
    const env = process.env.LLM_PROVIDER;
    process.env.LLM_PROVIDER = 'no-such-provider';
    try {
      const off = composeAgentServices({ parse, conversations: null });
      expect(off.llm).toBeNull();
      expect(off.services.conversations).toBeUndefined();
      void off.close();
    } finally {
      if (env === undefined) delete process.env.LLM_PROVIDER;
      else process.env.LLM_PROVIDER = env;
    }
  });
});

describe('createAgentServices', () => {
  it('adds dataPaths after the library’s paths and holds no conversations unless asked', async () => {
    const mine = ownPath('mine');
    const built = createAgentServices({ parse, dataPaths: [mine] });
    expect(
      built.services.data.serves('aggregate', {
        agentId: 'a',
        permissions: 'readonly',
        authType: 'acl_user',
        usingMasterKey: false,
        aclUser: 'u',
      }),
    ).toBe(true);
    expect(built.services.conversations).toBeUndefined();
    await built.close();
    const withModel = createAgentServices({ parse, llmProvider: llm });
    expect(withModel.services.conversations).toBeDefined();
    await withModel.close();
  });
});

describe('createEventStore', () => {
  const endpoint = (resumable: ResolvedMcpEndpointOptions['resumable']) =>
    ({ resumable, eventRetentionMs: 1000 }) as ResolvedMcpEndpointOptions;
  const context = { optionsName: 'ParseAgentModule.forRoot' };

  it('uses the application’s store when the endpoint is resumable, and none when it is not', () => {
    const mine = new InMemoryEventStore();
    expect(createEventStore(endpoint(true), mine, context)).toBe(mine);
    expect(createEventStore(endpoint(false), mine, context)).toBeNull();
    expect(createEventStore(endpoint(true), undefined, context)).toBeInstanceOf(InMemoryEventStore);
  });

  it('refuses two different stores (eventStore and mcp.resumable)', () => {
    const a = new InMemoryEventStore();
    expect(createEventStore(endpoint(a), a, context)).toBe(a);
    expect(() => createEventStore(endpoint(a), new InMemoryEventStore(), context)).toThrow(
      /given twice.*Pass it once/,
    );
    expect(() => createEventStore(endpoint(true), {} as InMemoryEventStore, context)).toThrow(
      /eventStore must be an EventStore/,
    );
  });
});
