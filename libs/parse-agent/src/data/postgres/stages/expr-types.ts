import type { SqlParams } from '../sql-params';
import type { Ref } from './relation';

/**
 * What an operator compiler may use of the expression compiler (stages/expressions.ts): compiling
 * its arguments and converting SQL values between the types MongoDB operators expect.
 */
export interface Exprs {
  readonly params: SqlParams;
  readonly where: string;
  compile(spec: unknown): Ref;
  args(op: string, arg: unknown, min: number, max?: number): Ref[];
  literal(value: unknown): Ref;
  withVars(vars: Record<string, Ref>): Exprs;
  jsonb(ref: Ref): string;
  number(ref: Ref, op: string): string;
  text(ref: Ref, op: string): string;
  date(ref: Ref, op: string): string;
  array(ref: Ref, op: string): string;
  truthy(ref: Ref): string;
}

export type OperatorCompiler = (c: Exprs, arg: unknown, op: string) => Ref;
