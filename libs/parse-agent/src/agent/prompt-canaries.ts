import { ParseAgentConfigError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';

/**
 * The `promptCanaries` agent option: strings or patterns an operator knows only an injection
 * attempt would contain (a phrase planted in honeypot rows, "ignore previous instructions"...).
 * A tool result that contains one emits a `prompt_injection` security event; with
 * `action: 'refuse'` the result is withheld from the model as well.
 */
export interface PromptCanaryOptions {
  /** Matched case-insensitively anywhere in a string of the result (values and keys). */
  strings?: string[];
  /** Regular expressions (a string is compiled case-insensitively). */
  patterns?: Array<RegExp | string>;
  /** 'report' (default): the event only. 'refuse': the call fails and the result is withheld. */
  action?: 'report' | 'refuse';
}

/** Canaries as an agent keeps them; `id` names one in events (`strings[0]`, `patterns[1]`). */
export interface PromptCanaries {
  matchers: ReadonlyArray<{ id: string; test(text: string): boolean }>;
  action: 'report' | 'refuse';
}

/**
 * Validates `promptCanaries` and adds them to the parent's (a sub-agent keeps every canary of its
 * ancestors, and `refuse` once set). Wrong values name the option.
 */
export function resolvePromptCanaries(
  value: unknown,
  parent: PromptCanaries | undefined,
  option = 'promptCanaries',
): PromptCanaries | undefined {
  if (value === undefined || value === null) return parent;
  if (!isPlainObject(value))
    throw new ParseAgentConfigError(`${option} must be { strings?, patterns?, action? }.`);
  const unknown = Object.keys(value).filter((k) => !['strings', 'patterns', 'action'].includes(k));
  if (unknown.length)
    throw new ParseAgentConfigError(
      `${option}: unknown key(s) ${unknown.join(', ')}; it takes strings, patterns and action.`,
    );
  const given = value as PromptCanaryOptions;
  if (given.action !== undefined && given.action !== 'report' && given.action !== 'refuse')
    throw new ParseAgentConfigError(
      `${option}.action must be 'report' or 'refuse' (got ${JSON.stringify(given.action)}).`,
    );
  const matchers = [...(parent?.matchers ?? [])];
  const list = (key: 'strings' | 'patterns'): unknown[] => {
    const entries: unknown = given[key];
    if (entries === undefined) return [];
    if (!Array.isArray(entries))
      throw new ParseAgentConfigError(`${option}.${key} must be an array.`);
    return entries;
  };
  list('strings').forEach((entry, i) => {
    if (typeof entry !== 'string' || !entry.trim())
      throw new ParseAgentConfigError(`${option}.strings[${i}] must be a non-empty string.`);
    const needle = entry.toLowerCase();
    matchers.push({ id: `strings[${i}]`, test: (text) => text.toLowerCase().includes(needle) });
  });
  list('patterns').forEach((entry, i) => {
    let pattern: RegExp;
    if (entry instanceof RegExp) {
      // Without g/y: test() would carry lastIndex from one string to the next.
      pattern = new RegExp(entry.source, entry.flags.replace(/[gy]/g, ''));
    } else if (typeof entry === 'string' && entry) {
      try {
        pattern = new RegExp(entry, 'i');
      } catch (error) {
        throw new ParseAgentConfigError(
          `${option}.patterns[${i}] is not a valid regular expression: ${(error as Error).message}`,
        );
      }
    } else {
      throw new ParseAgentConfigError(`${option}.patterns[${i}] must be a RegExp or a string.`);
    }
    matchers.push({ id: `patterns[${i}]`, test: (text) => pattern.test(text) });
  });
  const action =
    parent?.action === 'refuse' ? 'refuse' : (given.action ?? parent?.action ?? 'report');
  return { matchers, action };
}

/** The canaries found in a result: every string in it (keys too), walked once. */
export function canaryHits(canaries: PromptCanaries, data: unknown): string[] {
  const hits = new Set<string>();
  const visit = (value: unknown) => {
    if (hits.size === canaries.matchers.length) return;
    if (typeof value === 'string') {
      for (const m of canaries.matchers) if (!hits.has(m.id) && m.test(value)) hits.add(m.id);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        visit(key);
        visit(item);
      }
    }
  };
  visit(data);
  return [...hits];
}
