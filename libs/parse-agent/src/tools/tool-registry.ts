import Ajv, { type ValidateFunction } from 'ajv';
import { Subject, type Observable } from 'rxjs';
import { isolateSubscribers, reportToStderr } from '../core/isolated-observable';
import { isPermissionLevel } from '../core/constants';
import { ParseAgentConfigError } from '../core/errors';
import { policedHandler, type ToolRegistration } from './custom-tool';
import type { ToolDefinition } from './tool-definition';
import { DELETES_ASK } from './write/write-confirmation';
import { defaultAnnotations } from './builtin/tool-annotations';
import { withFailureAlternative } from './builtin/output-schemas';

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {} };

/**
 * Built-in and application tools. Argument schemas are compiled once per tool. Every change to the
 * application's tools is announced on `changes$` (the MCP layer turns it into listChanged).
 */
export class ToolRegistry {
  protected readonly builtins = new Map<string, ToolDefinition>();
  protected readonly custom = new Map<string, ToolDefinition>();
  protected readonly validators = new Map<string, ValidateFunction>();
  // Formats (email, date-time) are not checked here (no format plugin): a DTO tool's class-validator
  // rules check them, and ajv would warn about each one at compile time.
  protected readonly ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  protected readonly changeSubject = new Subject<{
    type: 'registered' | 'unregistered' | 'reset';
    name?: string;
  }>();
  /** A subscriber that throws is reported (options.warn, else stderr), never fatal. */
  readonly changes$: Observable<{ type: 'registered' | 'unregistered' | 'reset'; name?: string }>;

  /** `options.warn`: where a failing `changes$` subscriber is reported (default stderr). */
  constructor(builtins: ToolDefinition[] = [], options: { warn?: (message: string) => void } = {}) {
    this.changes$ = isolateSubscribers(
      this.changeSubject,
      'ToolRegistry.changes$',
      options.warn ?? reportToStderr,
    );
    // Built-in tools take only the arguments they declare: a made-up one (group_by on a count) is
    // refused rather than silently ignored, which would give a plausible wrong answer.
    // Their failures all carry structuredContent, so their output schemas admit the failure shape.
    for (const tool of builtins) {
      this.builtins.set(tool.name, {
        ...tool,
        inputSchema: closedSchema(tool.inputSchema),
        ...(tool.outputSchema ? { outputSchema: withFailureAlternative(tool.outputSchema) } : {}),
      });
    }
  }

  /** Adds an application tool. Names are unique; built-in names are reserved. */
  register<TArgs = Record<string, unknown>, TResult = unknown>(
    registration: ToolRegistration<TArgs, TResult>,
  ): ToolDefinition {
    const { name } = registration;
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
      throw new ParseAgentConfigError(
        `Tool name ${JSON.stringify(name)} is invalid: use lowercase letters, digits and underscores (max 64).`,
      );
    }
    if (this.builtins.has(name)) {
      throw new ParseAgentConfigError(
        `'${name}' is a built-in tool; register yours under another name.`,
      );
    }
    if (typeof registration.description !== 'string' || !registration.description.trim()) {
      throw new ParseAgentConfigError(
        `Tool '${name}' needs a description: agents choose tools by it.`,
      );
    }
    if (typeof registration.handler !== 'function') {
      throw new ParseAgentConfigError(`Tool '${name}' needs a handler function.`);
    }
    if (registration.permission !== undefined && !isPermissionLevel(registration.permission)) {
      throw new ParseAgentConfigError(
        `Tool '${name}': permission must be readonly, write or admin.`,
      );
    }
    if (
      registration.category !== undefined &&
      (typeof registration.category !== 'string' || !registration.category.trim())
    ) {
      throw new ParseAgentConfigError(`Tool '${name}': category must be a non-empty string.`);
    }
    const timeout: unknown = registration.timeout;
    if (timeout !== undefined && !(Number.isInteger(timeout) && (timeout as number) > 0)) {
      throw new ParseAgentConfigError(
        `Tool '${name}': timeout must be a whole number of seconds above 0, as a number (got ${JSON.stringify(timeout)}), e.g. timeout: 30.`,
      );
    }
    this.checkSchemaShape(name, 'inputSchema', registration.inputSchema);
    this.checkSchemaShape(name, 'outputSchema', registration.outputSchema);
    if (registration.title !== undefined && typeof registration.title !== 'string') {
      throw new ParseAgentConfigError(`Tool '${name}': title must be a string.`);
    }
    const badIcon = (registration.icons ?? []).find(
      (icon) => typeof icon?.src !== 'string' || !/^(https:|data:image\/)/.test(icon.src),
    );
    if (registration.icons !== undefined && (!Array.isArray(registration.icons) || badIcon)) {
      throw new ParseAgentConfigError(
        `Tool '${name}': icons must be [{ src, mimeType?, sizes? }] with an https: URL or a data:image/ URI as src.`,
      );
    }
    const access = registration.access ?? 'policed';
    if (access !== 'policed' && access !== 'master') {
      throw new ParseAgentConfigError(
        `Tool '${name}': access must be 'policed' (the default: the agent's own policed reads and writes) or 'master' (raw data paths, offered to master-key agents only).`,
      );
    }
    if (access === 'master' && registration.clientSafe === true) {
      throw new ParseAgentConfigError(
        `Tool '${name}': access 'master' tools are never offered to session-token agents, so clientSafe: true contradicts it. Drop clientSafe, or drop access: 'master' to give the tool the agent's policed access.`,
      );
    }
    const permission = registration.permission ?? 'readonly';
    const definition: ToolDefinition = {
      name,
      description: registration.description,
      inputSchema: registration.inputSchema ?? EMPTY_OBJECT_SCHEMA,
      outputSchema: registration.outputSchema,
      permission,
      category: registration.category ?? 'custom',
      timeout: registration.timeout,
      // Every tool tells clients whether it changes data; registrations that say nothing are
      // described by their tier (readonly reads, anything else may change data).
      annotations: {
        ...defaultAnnotations(registration.permission ?? 'readonly'),
        ...(registration.annotations ?? {}),
      },
      title: registration.title,
      icons: registration.icons,
      clientSafe: registration.clientSafe,
      access,
      // A policed tool's writer asks the person before a delete; a master tool asks itself.
      ...(access === 'policed' ? { confirm: DELETES_ASK } : {}),
      handler: (registration.access === 'master'
        ? registration.handler
        : policedHandler(registration.handler, {
            name,
            permission,
            confirm: DELETES_ASK,
          })) as ToolDefinition['handler'],
    };
    try {
      this.validators.set(name, this.ajv.compile(definition.inputSchema));
    } catch (error) {
      throw new ParseAgentConfigError(
        `Tool '${name}': inputSchema is not a valid JSON Schema (${(error as Error).message}).`,
      );
    }
    if (definition.outputSchema) {
      try {
        this.ajv.compile(definition.outputSchema);
      } catch (error) {
        throw new ParseAgentConfigError(
          `Tool '${name}': outputSchema is not a valid JSON Schema (${(error as Error).message}).`,
        );
      }
    }
    const replaced = this.custom.has(name);
    this.custom.set(name, definition);
    if (replaced) this.validators.set(name, this.ajv.compile(definition.inputSchema));
    this.changeSubject.next({ type: 'registered', name });
    return definition;
  }

  /**
   * MCP requires both schemas to describe a JSON object (`type: 'object'` at the root): clients
   * refuse a tool whose schema is a string, an array or another type.
   */
  protected checkSchemaShape(name: string, key: string, schema: unknown): void {
    if (schema === undefined) return;
    const isObject = typeof schema === 'object' && schema !== null && !Array.isArray(schema);
    if (!isObject || (schema as { type?: unknown }).type !== 'object') {
      throw new ParseAgentConfigError(
        `Tool '${name}': ${key} must be a JSON Schema object whose root is type 'object' (got ${describeValue(schema)}), e.g. { type: 'object', properties: { total: { type: 'number' } } }.`,
      );
    }
  }

  unregister(name: string): boolean {
    const removed = this.custom.delete(name);
    if (removed) {
      this.validators.delete(name);
      this.changeSubject.next({ type: 'unregistered', name });
    }
    return removed;
  }

  /** Removes every application tool (built-ins stay). */
  reset(): void {
    for (const name of this.custom.keys()) this.validators.delete(name);
    this.custom.clear();
    this.changeSubject.next({ type: 'reset' });
  }

  get(name: string): ToolDefinition | undefined {
    return this.custom.get(name) ?? this.builtins.get(name);
  }

  isBuiltin(name: string): boolean {
    return this.builtins.has(name);
  }

  isRegistered(name: string): boolean {
    return this.custom.has(name);
  }

  /** Built-ins first (in declaration order), then application tools. */
  list(): ToolDefinition[] {
    return [...this.builtins.values(), ...this.custom.values()];
  }

  customTools(): ToolDefinition[] {
    return [...this.custom.values()];
  }

  /** Validates arguments against the tool's schema; returns a readable error or undefined. */
  validate(name: string, args: unknown): string | undefined {
    const tool = this.get(name);
    if (!tool) return `unknown tool '${name}'`;
    let validator = this.validators.get(name);
    if (!validator) {
      validator = this.ajv.compile(tool.inputSchema);
      this.validators.set(name, validator);
    }
    if (validator(args)) return undefined;
    return (validator.errors ?? [])
      .map((e) => {
        const path = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '';
        if (e.keyword === 'required')
          return `${String((e.params as { missingProperty: string }).missingProperty)} is required`;
        if (e.keyword === 'additionalProperties') {
          const extra = (e.params as { additionalProperty: string }).additionalProperty;
          const valid = Object.keys((tool.inputSchema.properties as object | undefined) ?? {});
          return `unknown argument '${extra}'${path ? ` in ${path}` : ''}; valid arguments: ${valid.join(', ') || 'none'}`;
        }
        if (e.keyword === 'type' && (e.params as { type?: unknown }).type === 'boolean') {
          // "true", 1 or "yes" are refused, not read as true: say what to send instead.
          return `${path || 'arguments'} must be true or false (a JSON boolean, not a string or number)`;
        }
        if (e.keyword === 'enum') {
          return `${path} must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
        }
        return `${path || 'arguments'} ${e.message ?? 'is invalid'}`;
      })
      .join('; ');
  }
}

/** A short description of a value for an error message. */
function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') {
    const type = (value as { type?: unknown }).type;
    return type === undefined ? 'a schema without type' : `type ${JSON.stringify(type)}`;
  }
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** The schema with `additionalProperties: false` unless it says otherwise. */
function closedSchema(schema: ToolDefinition['inputSchema']): ToolDefinition['inputSchema'] {
  if (schema.type !== 'object' || 'additionalProperties' in schema) return schema;
  return { ...schema, additionalProperties: false };
}
