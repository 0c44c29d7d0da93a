import type { Observable, Subscriber } from 'rxjs';
import { IsolatedObservable, reportToStderr } from '../core/isolated-observable';
import { AgentCancelledError, ParseAgentConfigError, ParseAgentError } from '../core/errors';
import { cancelledBy, raceAbort } from '../core/race-abort';
import type { ToolEnvelope } from '../core/envelope';
import type {
  LlmMessage,
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmToolCall,
  LlmToolDefinition,
} from '../ports/llm-provider';
import { compactionRequest, shouldAutoCompact, summaryMessage } from './compaction';
import type { ConversationAgent } from '../ports/conversation';
import { ConversationBusyError, LlmProviderError } from './conversation-errors';
import { ConversationResult, type ConversationEvent } from './conversation-result';
import type {
  AskOptions,
  ConversationOptions,
  FinishReason,
  ToolCallRecord,
} from '../ports/conversation';
import { ConversationUsage } from './conversation-usage';
import {
  costOf,
  DEFAULT_MODEL_PRICES,
  priceFor,
  validatePriceTable,
  type ModelPrice,
  type ModelPriceTable,
} from './model-prices';
import {
  historyFromSnapshot,
  snapshotOf,
  type ConversationSnapshot,
  type RestoreLimits,
} from './conversation-snapshot';
import { observableToAsyncIterable } from './observable-to-async-iterable';
import { createLlmProvider } from './provider-from-env';
import {
  conversationSystemPrompt,
  validateSystemPromptOptions,
  type SystemPromptOptions,
} from './system-prompt';
import {
  envelopeForThrown,
  invalidArgumentsEnvelope,
  notRunEnvelope,
  toolResultContent,
} from './tool-result-content';

/** Model turns one question may take before it stops with `max_iterations`. */
export const DEFAULT_MAX_ITERATIONS = 8;

type Emit = ((event: ConversationEvent) => void) | undefined;

/**
 * A conversation between a language model and one agent: the model answers questions by calling
 * the agent's tools, which run with the agent's identity and limits. One question at a time.
 */
export class ParseAgentConversation {
  readonly provider: LlmProvider;
  readonly maxIterations: number;
  protected readonly systemPromptOptions: SystemPromptOptions;
  /** Built on first use, then kept: the agent's identity and tools do not change. */
  protected builtSystemPrompt?: string;
  protected readonly maxTokens?: number;
  protected readonly autoCompactAt?: number;
  protected priceTable: ModelPriceTable;
  protected messages: LlmMessage[] = [];
  protected sessionUsage = ConversationUsage.empty;
  protected lastQuestionUsage = ConversationUsage.empty;
  protected tokensSinceCompaction = 0;
  protected busy = false;

  constructor(
    readonly agent: ConversationAgent,
    options: ConversationOptions = {},
  ) {
    const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    if (!Number.isInteger(maxIterations) || maxIterations < 1) {
      throw new ParseAgentConfigError(
        `maxIterations must be a positive integer (model calls per question), got ${String(options.maxIterations)}.`,
      );
    }
    const budget = options.autoCompactAt;
    if (budget !== undefined && !(Number.isFinite(budget) && budget > 0)) {
      throw new ParseAgentConfigError(
        `autoCompactAt must be a positive number of tokens, got ${String(budget)}. Leave it unset to turn automatic compaction off.`,
      );
    }
    this.maxIterations = maxIterations;
    this.autoCompactAt = budget;
    this.systemPromptOptions = {
      systemPrompt: options.systemPrompt,
      systemPromptSuffix: options.systemPromptSuffix,
      user: options.user,
    };
    // Wrong types fail here, not at the first question; the text itself is built lazily.
    validateSystemPromptOptions(this.systemPromptOptions);
    this.maxTokens = options.maxTokens;
    this.priceTable = mergePrices(options.pricing);
    this.provider = options.provider ?? createLlmProvider(options.llm, options.env);
  }

  /**
   * The system prompt sent first in every request: the default (server instructions, whom the
   * agent acts for, Parse conventions), or `systemPrompt`, with `systemPromptSuffix` appended.
   * '' when none is sent.
   */
  get systemPrompt(): string {
    return (this.builtSystemPrompt ??= conversationSystemPrompt(
      this.agent,
      this.systemPromptOptions,
    ));
  }

  /** A copy of the conversation so far (no system prompt), safe to inspect. */
  get history(): LlmMessage[] {
    return structuredClone(this.messages);
  }

  /**
   * The history as a plain, versioned object for an app to keep between requests (e.g. in its
   * session store) and hand to `restore()`. Nothing about identity, tools or permissions is in it.
   */
  toJSON(): ConversationSnapshot {
    return snapshotOf(this.messages);
  }

  /**
   * A conversation on `agent` continuing from a snapshot `toJSON()` wrote. The snapshot is checked
   * as untrusted client data (see `historyFromSnapshot`); the system prompt, tools and permissions
   * are the agent's own, never the snapshot's. Continue it with `reply()` (ask() starts afresh).
   */
  static restore(
    agent: ConversationAgent,
    snapshot: unknown,
    options: ConversationOptions & { limits?: RestoreLimits } = {},
  ): ParseAgentConversation {
    const { limits, ...conversationOptions } = options;
    const history = historyFromSnapshot(snapshot, limits);
    const conversation = new ParseAgentConversation(agent, conversationOptions);
    conversation.messages = history;
    return conversation;
  }

  /** Session totals: every model call of every question and compaction. */
  get usage(): ConversationUsage {
    return this.sessionUsage;
  }

  /** Tokens and cost of the most recent question. */
  get lastUsage(): ConversationUsage {
    return this.lastQuestionUsage;
  }

  /** Prices in use (USD per million tokens). */
  get pricing(): ModelPriceTable {
    return this.priceTable;
  }

  /** Replaces the user prices; defaults still apply to models not named. Affects later calls only. */
  set pricing(table: Record<string, ModelPrice>) {
    this.priceTable = mergePrices(table);
  }

  /** Forgets the history. Session usage keeps counting. */
  reset(): void {
    this.messages = [];
    this.tokensSinceCompaction = 0;
  }

  /** Asks a question; starts from an empty history unless `reset: false`. */
  ask(question: string, options: AskOptions = {}): Promise<ConversationResult> {
    return this.run(question, options.reset ?? true, options.signal, undefined);
  }

  /** Asks a follow-up in the same conversation. */
  reply(question: string, options: Omit<AskOptions, 'reset'> = {}): Promise<ConversationResult> {
    return this.run(question, false, options.signal, undefined);
  }

  /**
   * Asks a question and streams what happens: text as the model writes it, each tool call and
   * result, usage per model call, then `done` with the result. Each subscription asks once;
   * unsubscribing cancels the question.
   */
  stream(question: string, options: AskOptions = {}): Observable<ConversationEvent> {
    // A subscriber that throws, or one without an error handler when the question fails, is
    // reported on stderr: rxjs would otherwise end the process.
    return new IsolatedObservable<ConversationEvent>(
      (subscriber) => this.streamInto(question, options, subscriber),
      'conversation.stream()',
      reportToStderr,
    );
  }

  private streamInto(
    question: string,
    options: AskOptions,
    subscriber: Subscriber<ConversationEvent>,
  ): () => void {
    const controller = new AbortController();
    const signal = options.signal
      ? AbortSignal.any([options.signal, controller.signal])
      : controller.signal;
    let finished = false;
    this.run(question, options.reset ?? true, signal, (event) => subscriber.next(event)).then(
      (result) => {
        finished = true;
        subscriber.next({ type: 'done', result });
        subscriber.complete();
      },
      (error: unknown) => {
        finished = true;
        subscriber.error(error);
      },
    );
    return () => {
      if (!finished) controller.abort(new AgentCancelledError('unsubscribed'));
    };
  }

  /** The same events as `stream`, for `for await`. Breaking out of the loop cancels the question. */
  events(question: string, options: AskOptions = {}): AsyncIterable<ConversationEvent> {
    return observableToAsyncIterable(this.stream(question, options));
  }

  /**
   * Replaces the history with a model-written summary that keeps what tools found; one extra model
   * call, counted in `usage`. Resolves to the summary ('' when there was nothing to compact).
   */
  async compact(options: { signal?: AbortSignal } = {}): Promise<string> {
    this.enter();
    try {
      return await this.compactHistory(options.signal, undefined);
    } finally {
      this.busy = false;
    }
  }

  protected enter(): void {
    if (this.busy) throw new ConversationBusyError();
    this.busy = true;
  }

  protected async run(
    question: string,
    reset: boolean,
    signal: AbortSignal | undefined,
    emit: Emit,
  ): Promise<ConversationResult> {
    if (typeof question !== 'string' || !question.trim()) {
      throw new ParseAgentConfigError('A question must be a non-empty string.');
    }
    this.enter();
    try {
      if (signal?.aborted) throw cancelledBy(signal);
      if (reset) this.reset();
      else if (shouldAutoCompact(this.autoCompactAt, this.tokensSinceCompaction, this.messages)) {
        await this.compactHistory(signal, emit);
      }
      return await this.answer(question, signal, emit);
    } finally {
      this.busy = false;
    }
  }

  /** The tool loop. History changes only when the question completes. */
  protected async answer(
    question: string,
    signal: AbortSignal | undefined,
    emit: Emit,
  ): Promise<ConversationResult> {
    const earlier = this.messages;
    const turn: LlmMessage[] = [{ role: 'user', content: question }];
    const tools = this.toolsForModel();
    const system = this.systemPrompt || undefined;
    const calls: ToolCallRecord[] = [];
    let usage = ConversationUsage.empty;
    let text: string;
    let finishReason: FinishReason = 'completed';
    let iteration = 0;
    for (;;) {
      iteration += 1;
      const { response, callUsage } = await this.callModel(
        {
          system,
          messages: [...earlier, ...turn],
          tools,
          maxTokens: this.maxTokens,
          signal,
        },
        emit,
        iteration,
      );
      usage = usage.plus(callUsage);
      text = response.text;
      turn.push({
        role: 'assistant',
        content: response.text,
        ...(response.toolCalls.length ? { toolCalls: response.toolCalls } : {}),
      });
      if (!response.toolCalls.length) break;
      if (iteration >= this.maxIterations) {
        // Each requested call still gets a result, so the history stays valid for a follow-up.
        finishReason = 'max_iterations';
        for (const call of response.toolCalls) {
          turn.push(toolMessage(call, notRunEnvelope(this.maxIterations)));
        }
        break;
      }
      for (const call of response.toolCalls) {
        const record = await this.runTool(call, signal, emit, iteration);
        calls.push(record);
        turn.push(toolMessage(call, record.result));
      }
    }
    this.messages = [...earlier, ...turn];
    this.lastQuestionUsage = usage;
    const transcript: LlmMessage[] = system
      ? [{ role: 'system', content: system }, ...structuredClone(this.messages)]
      : structuredClone(this.messages);
    return new ConversationResult(
      text,
      finishReason,
      iteration,
      calls,
      transcript,
      usage,
      (next, options) => this.reply(next, options),
    );
  }

  protected toolsForModel(): LlmToolDefinition[] {
    return this.agent.toolDefinitions({ format: 'mcp' }).map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
  }

  /** One provider call; its usage counts toward the session even if the question later fails. */
  protected async callModel(
    request: LlmRequest,
    emit: Emit,
    iteration: number,
  ): Promise<{ response: LlmResponse; callUsage: ConversationUsage }> {
    const signal = request.signal;
    const onEvent = emit
      ? (event: LlmStreamEvent) => {
          if (event.type === 'text') emit({ type: 'text', text: event.text, iteration });
        }
      : undefined;
    let response: LlmResponse;
    try {
      response = await raceAbort(this.provider.complete(request, onEvent), signal, cancelledBy);
    } catch (error) {
      if (signal?.aborted) throw cancelledBy(signal);
      const failure =
        error instanceof ParseAgentError
          ? error
          : new LlmProviderError(
              this.provider.name,
              (error as Error)?.message ?? String(error),
              typeof (error as { status?: unknown })?.status === 'number'
                ? (error as { status: number }).status
                : undefined,
              { cause: error },
            );
      this.agent.llmFailed?.(failure);
      throw failure;
    }
    const price =
      priceFor(this.provider.model, this.priceTable) ?? priceFor(response.model, this.priceTable);
    const callUsage = ConversationUsage.ofCall(response.usage, costOf(response.usage, price));
    this.sessionUsage = this.sessionUsage.plus(callUsage);
    this.tokensSinceCompaction += callUsage.totalTokens;
    emit?.({ type: 'model_usage', usage: callUsage, model: response.model, iteration });
    this.agent.llmResponded?.({
      iteration,
      model: response.model,
      text: response.text,
      toolCalls: response.toolCalls.map((c) => ({ id: c.id, name: c.name })),
      ...(response.stopReason ? { stopReason: response.stopReason } : {}),
      usage: { ...response.usage, costUsd: callUsage.costUsd },
    });
    return { response, callUsage };
  }

  /** Runs one requested tool; its failure becomes the result the model reads, never a throw. */
  protected async runTool(
    call: LlmToolCall,
    signal: AbortSignal | undefined,
    emit: Emit,
    iteration: number,
  ): Promise<ToolCallRecord> {
    emit?.({
      type: 'tool_call',
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      iteration,
    });
    const started = Date.now();
    let result: ToolEnvelope;
    if (call.invalidArguments) {
      result = invalidArgumentsEnvelope(call.name, call.invalidArguments);
    } else {
      try {
        result = await raceAbort(
          this.agent.execute(call.name, call.arguments, { signal }),
          signal,
          cancelledBy,
        );
      } catch (error) {
        if (signal?.aborted) throw cancelledBy(signal);
        result = envelopeForThrown(error, call.name);
      }
      // The agent reports its own cancellation as an envelope; the question stops all the same.
      if (signal?.aborted) throw cancelledBy(signal);
    }
    const record: ToolCallRecord = {
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      success: result.success,
      durationMs: Date.now() - started,
      result,
    };
    emit?.({ type: 'tool_result', iteration, ...record });
    return record;
  }

  protected async compactHistory(signal: AbortSignal | undefined, emit: Emit): Promise<string> {
    if (!this.messages.length) return '';
    const { response, callUsage } = await this.callModel(
      { ...compactionRequest(this.messages), maxTokens: this.maxTokens, signal },
      undefined,
      0,
    );
    const summary = response.text.trim();
    if (!summary) {
      throw new LlmProviderError(
        this.provider.name,
        'the model returned an empty summary, so the history was left as it was. Try compact() again or reset().',
      );
    }
    this.messages = [summaryMessage(summary)];
    this.tokensSinceCompaction = 0;
    emit?.({ type: 'compacted', summary, usage: callUsage });
    return summary;
  }
}

function toolMessage(call: LlmToolCall, result: ToolEnvelope): LlmMessage {
  return {
    role: 'tool',
    toolCallId: call.id,
    name: call.name,
    content: toolResultContent(result),
    ...(result.success ? {} : { isError: true }),
  };
}

function mergePrices(table: Record<string, ModelPrice> | undefined): ModelPriceTable {
  return Object.freeze({ ...DEFAULT_MODEL_PRICES, ...validatePriceTable(table ?? {}) });
}
