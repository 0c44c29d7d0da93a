import { AgentValidationError } from '../../core/errors';

/** What `pg`'s `client.query(text, values)` takes: the SQL text never holds a value. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * Collects bind parameters in order and hands out their placeholders ($1, $2, ...). Every value
 * that reaches SQL goes through here, so the text carries only placeholders and quoted identifiers.
 */
export class SqlParams {
  readonly values: unknown[] = [];
  private aliases = 0;

  /** A fresh table alias for this query (`t1`, `t2`, ...): generated here, never taken from input. */
  alias(prefix = 't'): string {
    this.aliases += 1;
    return `${prefix}${this.aliases}`;
  }

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** A non-negative whole number (limit, skip) as a bind parameter, or an error naming the argument. */
  addCount(value: unknown, name: string, options: { min?: number; max?: number } = {}): string {
    const min = options.min ?? 0;
    const max = options.max ?? Number.MAX_SAFE_INTEGER;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new AgentValidationError(
        `${name} must be a whole number between ${min} and ${max}; got ${describe(value)}.`,
      );
    }
    return this.add(value);
  }

  query(text: string): SqlQuery {
    return { text, values: [...this.values] };
  }
}

function describe(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}
