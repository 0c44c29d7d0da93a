/**
 * The TypeScript type of what a JSON Schema accepts, read from the schema's literal type, so a
 * tool's `inputSchema` is the one statement of its arguments: `readTool` and `writeTool` give the
 * handler `ArgumentsOf<typeof inputSchema>`, and an argument the schema does not declare is a
 * compile error, not an `undefined` found in production.
 *
 * It covers the subset the tools' schemas use: `type` (one name or a list), `enum`, `const`,
 * `anyOf`/`oneOf`, `items`, and `properties` with `required` and `additionalProperties`. Other
 * keywords (`minimum`, `minItems`, `pattern`, `$ref`...) narrow values the type cannot express, or
 * are not followed, and read as the wider type (`unknown` for a `$ref`).
 *
 * A schema keeps its literal types only when written so: `as const` on a shared fragment, the
 * `const` type parameters of `readTool`/`writeTool` and the schema helpers for literals written in
 * place. A widened schema (`type: string`) reads as `unknown`, so a handler using it does not
 * compile until the fragment says `as const`.
 */

/** A schema as the helpers take it: a JSON object (readonly, as `as const` leaves it). */
export type Schema = { readonly [keyword: string]: unknown };

/** Properties of an object schema, by name. */
export type SchemaProperties = { readonly [name: string]: Schema };

/**
 * An object schema with these properties, of which `R` are required. What `classArguments` and
 * the other helpers return, so the property types survive the call.
 */
export type ObjectSchema<
  P extends SchemaProperties = SchemaProperties,
  R extends readonly string[] = readonly string[],
> = {
  readonly type: 'object';
  readonly properties: P;
  readonly required: R;
};

/** One flat object type, not an intersection, for readable hovers and error messages. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The value a schema accepts. */
export type SchemaValue<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly anyOf: readonly (infer B)[] }
      ? SchemaValue<B>
      : S extends { readonly oneOf: readonly (infer B)[] }
        ? SchemaValue<B>
        : S extends { readonly type: infer T }
          ? TypedValue<T, S>
          : unknown;

/** The arguments a tool's input schema accepts (an object schema at its root). */
export type ArgumentsOf<S> = SchemaValue<S>;

/** The value of a schema with `type: T` (a list of names is their union). */
type TypedValue<T, S> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? ArrayValue<S>
          : T extends 'object'
            ? ObjectValue<S>
            : T extends readonly (infer U)[]
              ? TypedValue<U, S>
              : unknown;

type ArrayValue<S> = S extends { readonly items: infer I } ? SchemaValue<I>[] : unknown[];

/**
 * An object's declared properties: those in `required` required, the others optional. Keys the
 * schema does not declare are not in the type (a TypeScript object type allows more keys at run
 * time, so this stays true of a schema left open), which is what makes reading an undeclared
 * argument a compile error. `additionalProperties: true` or a schema adds an index signature; an
 * object that declares no properties is a record of its `additionalProperties` (of `unknown`
 * without one).
 */
type ObjectValue<S> = S extends { readonly properties: infer P }
  ? Flat<DeclaredValue<P, RequiredKeys<S>> & ExtraValue<S>>
  : S extends { readonly additionalProperties: infer A }
    ? A extends false
      ? Record<string, never>
      : A extends true
        ? Record<string, unknown>
        : Record<string, SchemaValue<A>>
    : Record<string, unknown>;

/**
 * The names listed in `required`. A list whose names are not literal (a widened `string[]`) names
 * none: the properties then read as optional, which a handler must check, rather than as present.
 */
type RequiredKeys<S> = S extends { readonly required: readonly (infer R)[] }
  ? string extends R
    ? never
    : R
  : never;

type DeclaredValue<P, R> = {
  -readonly [K in keyof P as K extends R ? K : never]: SchemaValue<P[K]>;
} & {
  -readonly [K in keyof P as K extends R ? never : K]?: SchemaValue<P[K]>;
};

type ExtraValue<S> = S extends { readonly additionalProperties: infer A }
  ? A extends false
    ? unknown
    : { [key: string]: unknown }
  : unknown;
