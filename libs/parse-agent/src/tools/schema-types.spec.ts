import Ajv from 'ajv';
import { readTool } from './read/read-tool';
import { writeTool } from './write/write-tool';
import type { ArgumentsOf, SchemaValue } from './schema-types';
import type { ToolDefinition } from './tool-definition';
import type { ToolRegistration } from './custom-tool';
import { classArguments, WHERE_ARG } from './builtin/tool-schemas';
import { helperArguments } from './builtin/aggregate/analytics-schemas';
import { countObjects } from './builtin/query/count-objects.tool';
import { groupBy } from './builtin/aggregate/group-by.tool';
import { createClass } from './builtin/mutation/create-class.tool';
import type { GroupOperation } from '../security/pipeline/group-by-pipeline';

/**
 * `ArgumentsOf` and the tools that use it, checked at compile time: this file is type-checked in
 * CI by test/architecture/compile-time-checks.spec.ts (jest itself only transpiles), so a
 * `Same<...>` that is false, or a `@ts-expect-error` line that compiles, fails the build. The
 * tests below also run the schemas through ajv, the validator the registry uses, to show that
 * what the type accepts the schema accepts and what the type refuses the schema refuses.
 */

/** True when each of A and B is assignable to the other (optional and required keys differ). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only when its type argument is `true`. */
const holds = <T extends true>(): T | undefined => undefined;

type HandlerArgs<T> = T extends ToolDefinition<infer A, unknown> ? A : never;

const ORDER_ARGS = classArguments(
  {
    status: { type: 'string', enum: ['open', 'paid', 'void'] },
    total: { type: 'number' },
    quantity: { type: 'integer', minimum: 1 },
    express: { type: 'boolean' },
    where: WHERE_ARG,
    tags: { type: 'array', items: { type: 'string' } },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
        required: ['sku'],
      },
    },
    prices: { type: 'object', additionalProperties: { type: 'number' } },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  ['status'],
);
type OrderArgs = ArgumentsOf<typeof ORDER_ARGS>;

const validate = new Ajv({ strict: false }).compile(ORDER_ARGS);

describe('ArgumentsOf: a tool schema read as a TypeScript type', () => {
  it('makes required arguments required and the others optional', () => {
    holds<Same<OrderArgs['class_name'], string>>();
    holds<Same<Pick<OrderArgs, 'status'>, { status: 'open' | 'paid' | 'void' }>>();
    holds<Same<Pick<OrderArgs, 'total'>, { total?: number }>>();
    holds<Same<Pick<OrderArgs, 'quantity'>, { quantity?: number }>>();
    holds<Same<Pick<OrderArgs, 'express'>, { express?: boolean }>>();
    // @ts-expect-error status is required
    const missing: OrderArgs = { class_name: 'Order' };
    expect(validate(missing)).toBe(false);

    const least: OrderArgs = { class_name: 'Order', status: 'paid' };
    expect(validate(least)).toBe(true);
  });

  it('reads an enum as the union of its values', () => {
    holds<Same<NonNullable<OrderArgs['status']>, 'open' | 'paid' | 'void'>>();
    // @ts-expect-error 'late' is not one of the enum's values
    const late: OrderArgs = { class_name: 'Order', status: 'late' };
    expect(validate(late)).toBe(false);
  });

  it('follows items, nested objects, additionalProperties and anyOf', () => {
    holds<Same<OrderArgs['tags'], string[] | undefined>>();
    holds<Same<OrderArgs['lines'], Array<{ sku: string; qty?: number }> | undefined>>();
    holds<Same<OrderArgs['prices'], Record<string, number> | undefined>>();
    holds<Same<OrderArgs['note'], string | null | undefined>>();
    // An object schema that declares no properties takes any keys.
    holds<Same<OrderArgs['where'], Record<string, unknown> | undefined>>();
    const full: OrderArgs = {
      class_name: 'Order',
      status: 'open',
      total: 9.5,
      quantity: 2,
      express: false,
      where: { total: { $gt: 1 } },
      tags: ['a'],
      lines: [{ sku: 'x', qty: 1 }],
      prices: { x: 1 },
      note: null,
    };
    expect(validate(full)).toBe(true);
    // @ts-expect-error a line needs its sku
    const noSku: OrderArgs = { class_name: 'Order', status: 'open', lines: [{ qty: 1 }] };
    expect(validate(noSku)).toBe(false);
  });

  it('reads type lists, const, oneOf and open objects', () => {
    holds<Same<SchemaValue<{ type: readonly ['string', 'null'] }>, string | null>>();
    holds<Same<SchemaValue<{ const: 'v1' }>, 'v1'>>();
    holds<
      Same<
        SchemaValue<{ oneOf: readonly [{ type: 'integer' }, { type: 'string' }] }>,
        number | string
      >
    >();
    holds<
      Same<
        SchemaValue<{
          type: 'object';
          properties: { a: { type: 'string' } };
          additionalProperties: true;
        }>,
        { a?: string; [key: string]: unknown }
      >
    >();
    holds<Same<SchemaValue<{ type: 'array' }>, unknown[]>>();
  });

  it('reads a schema that lost its literal types as unknown, and widened required names as none', () => {
    // `type: string` (a fragment without `as const`) says nothing the compiler can use.
    holds<Same<SchemaValue<{ type: string }>, unknown>>();
    holds<
      Same<
        SchemaValue<{ type: 'object'; properties: { a: { type: 'string' } }; required: string[] }>,
        { a?: string }
      >
    >();
    expect(true).toBe(true);
  });

  it('lets required name only declared properties', () => {
    // @ts-expect-error 'tenant' is not a property of these arguments
    classArguments({ limit: { type: 'integer' } }, ['tenant']);
    // @ts-expect-error nor of a helper tool's
    helperArguments({ type: 'string' }, { sort: { type: 'string' } }, ['order']);
    expect(true).toBe(true);
  });
});

describe('readTool and writeTool give the handler the arguments its schema declares', () => {
  it('types args from inputSchema and refuses an undeclared argument at compile time', () => {
    const tool = readTool({
      name: 'typed_read',
      description: 'compile-time check',
      category: 'query',
      inputSchema: classArguments(
        { limit: { type: 'integer' }, mode: { type: 'string', enum: ['fast', 'exact'] } },
        ['mode'],
      ),
      handler: (args) => {
        const mode: 'fast' | 'exact' = args.mode;
        // @ts-expect-error limit is optional: it may be undefined
        const limit: number = args.limit;
        // @ts-expect-error where is not declared by the schema
        void args.where;
        return { mode, limit };
      },
    });
    holds<
      Same<HandlerArgs<typeof tool>, { class_name: string; limit?: number; mode: 'fast' | 'exact' }>
    >();
    expect(tool.name).toBe('typed_read');
  });

  it('types an inline schema without as const (the const type parameter keeps its literals)', () => {
    const tool = writeTool({
      name: 'typed_write',
      description: 'compile-time check',
      category: 'mutation',
      permission: 'write',
      inputSchema: {
        type: 'object',
        properties: { class_name: { type: 'string' }, values: { type: 'object' } },
        required: ['class_name', 'values'],
      },
      handler: (args) => {
        // @ts-expect-error object_id is not declared by the schema
        void args.object_id;
        return { class_name: args.class_name, keys: Object.keys(args.values) };
      },
    });
    holds<
      Same<HandlerArgs<typeof tool>, { class_name: string; values: Record<string, unknown> }>
    >();
    expect(tool.name).toBe('typed_write');
  });

  it('holds the built-in tools to their schemas', () => {
    holds<
      Same<
        HandlerArgs<typeof countObjects>,
        { class_name: string; where?: Record<string, unknown>; apply_canonical_filter?: boolean }
      >
    >();
    holds<Same<HandlerArgs<typeof groupBy>['operation'], GroupOperation | undefined>>();
    holds<
      Same<
        HandlerArgs<typeof createClass>['fields'],
        Record<string, { type: string; target_class?: string }>
      >
    >();
    expect(countObjects.name).toBe('count_objects');
  });

  it('keeps application tools with an explicit argument type compiling', () => {
    interface RefundArgs {
      orderId: string;
      amount?: number;
    }
    const registration: ToolRegistration<RefundArgs> = {
      name: 'refund',
      description: 'compile-time check',
      inputSchema: { type: 'object', properties: { orderId: { type: 'string' } } },
      handler: (args) => ({ orderId: args.orderId, amount: args.amount ?? 0 }),
    };
    const definition: ToolDefinition<RefundArgs> = {
      name: 'refund',
      description: 'compile-time check',
      inputSchema: { type: 'object' },
      permission: 'readonly',
      category: 'custom',
      handler: (args) => args.orderId,
    };
    expect([registration.name, definition.name]).toEqual(['refund', 'refund']);
  });
});
