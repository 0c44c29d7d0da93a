import { AgentValidationError, ParseAgentConfigError } from '../core/errors';

/**
 * A class-validator DTO: any class constructor. Typed structurally so the library's public types
 * never name class-validator (an optional peer).
 */
export type DtoClass = abstract new (...args: never[]) => object;

/** A JSON Schema object (what the wire shows). */
export type JsonSchemaObject = Record<string, unknown>;

/** Whether a value given where a JSON Schema is accepted is a DTO class instead. */
export function isDtoClass(value: unknown): value is DtoClass {
  return (
    typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object'
  );
}

// The few members of the optional packages the library uses, typed here so no type of theirs leaks.
interface ValidationErrorLike {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationErrorLike[];
}
interface ValidatorOptions {
  whitelist?: boolean;
  forbidNonWhitelisted?: boolean;
  forbidUnknownValues?: boolean;
  skipMissingProperties?: boolean;
  validationError?: { target?: boolean; value?: boolean };
}
interface ClassValidatorModule {
  validate(object: object, options?: ValidatorOptions): Promise<ValidationErrorLike[]>;
  getMetadataStorage(): {
    getTargetValidationMetadatas(
      target: DtoClass,
      schema: string,
      always: boolean,
      strictGroups: boolean,
    ): unknown[];
  };
}
interface ClassTransformerModule {
  plainToInstance(cls: DtoClass, plain: unknown, options?: Record<string, unknown>): object;
}
interface JsonSchemaModule {
  validationMetadatasToSchemas(options?: Record<string, unknown>): Record<string, JsonSchemaObject>;
  targetConstructorToSchema(cls: DtoClass, options?: Record<string, unknown>): JsonSchemaObject;
}
export interface DtoPackages {
  validator: ClassValidatorModule;
  transformer: ClassTransformerModule;
  jsonSchema: JsonSchemaModule;
  transformerStorage: unknown;
}

export type ModuleLoader = (name: string) => unknown;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const defaultLoader: ModuleLoader = (name) => require(name) as unknown;

const DTO_PACKAGES = ['class-validator', 'class-transformer', 'class-validator-jsonschema'];

function isMissing(error: unknown, name: string): boolean {
  return (
    (error as { code?: string })?.code === 'MODULE_NOT_FOUND' &&
    String((error as Error).message).includes(`'${name}`)
  );
}

let cached: DtoPackages | undefined;

/**
 * Loads class-validator, class-transformer and class-validator-jsonschema, only when a DTO class is
 * used. A missing package is a configuration error naming what to install.
 */
export function loadDtoPackages(load: ModuleLoader = defaultLoader): DtoPackages {
  if (cached && load === defaultLoader) return cached;
  const loaded: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const name of [...DTO_PACKAGES, 'class-transformer/cjs/storage']) {
    try {
      loaded[name] = load(name);
    } catch (error) {
      const pkg = name.startsWith('class-transformer') ? 'class-transformer' : name;
      if (!isMissing(error, pkg)) throw error;
      if (!missing.includes(pkg)) missing.push(pkg);
    }
  }
  if (missing.length) {
    throw new ParseAgentConfigError(
      `A DTO class was given where a JSON Schema is accepted; that needs ${missing.map((m) => `'${m}'`).join(', ')}, not installed. Install next to nestjs-parse-agent: npm install ${DTO_PACKAGES.join(' ')}`,
    );
  }
  const packages: DtoPackages = {
    validator: loaded['class-validator'] as ClassValidatorModule,
    transformer: loaded['class-transformer'] as ClassTransformerModule,
    jsonSchema: loaded['class-validator-jsonschema'] as JsonSchemaModule,
    transformerStorage: (
      loaded['class-transformer/cjs/storage'] as { defaultMetadataStorage: unknown }
    ).defaultMetadataStorage,
  };
  if (load === defaultLoader) cached = packages;
  return packages;
}

/** class-validator alone (entity rules need no more); undefined when it is not installed. */
export function loadClassValidator(
  load: ModuleLoader = defaultLoader,
): ClassValidatorModule | undefined {
  try {
    return load('class-validator') as ClassValidatorModule;
  } catch (error) {
    if (isMissing(error, 'class-validator')) return undefined;
    throw error;
  }
}

const schemas = new WeakMap<DtoClass, JsonSchemaObject>();

/** Whether the DTO opted out of refusing unknown properties (`@JSONSchema({ additionalProperties: true })`). */
export function dtoAllowsUnknown(cls: DtoClass): boolean {
  return dtoJsonSchema(cls).additionalProperties === true;
}

/**
 * The JSON Schema of a DTO, derived once by class-validator-jsonschema. Nested DTOs are inlined
 * (a recursive one stays an object), and every object refuses unknown properties unless its class
 * says otherwise, as validation does.
 */
export function dtoJsonSchema(cls: DtoClass, packages?: DtoPackages): JsonSchemaObject {
  const known = schemas.get(cls);
  if (known) return known;
  const { jsonSchema, transformerStorage } = packages ?? loadDtoPackages();
  const options = {
    classTransformerMetadataStorage: transformerStorage,
    refPointerPrefix: '#/definitions/',
  };
  const definitions = jsonSchema.validationMetadatasToSchemas(options);
  const root = jsonSchema.targetConstructorToSchema(cls, options);
  const schema = inline(root, definitions, [cls.name]) as JsonSchemaObject;
  if (schema.type === undefined) schema.type = 'object';
  if (schema.properties === undefined) schema.properties = {};
  schemas.set(cls, schema);
  return schema;
}

function inline(
  node: unknown,
  definitions: Record<string, JsonSchemaObject>,
  seen: string[],
): unknown {
  if (Array.isArray(node)) return node.map((n) => inline(n, definitions, seen));
  if (!node || typeof node !== 'object') return node;
  const record = node as JsonSchemaObject;
  if (typeof record.$ref === 'string' && record.$ref.startsWith('#/definitions/')) {
    const name = record.$ref.slice('#/definitions/'.length);
    const { $ref: _ref, ...rest } = record;
    const target = definitions[name];
    if (!target || seen.includes(name)) return { type: 'object', ...rest };
    return { ...(inline(target, definitions, [...seen, name]) as JsonSchemaObject), ...rest };
  }
  const out: JsonSchemaObject = {};
  for (const [key, value] of Object.entries(record)) out[key] = inline(value, definitions, seen);
  if (out.type === 'object' && out.properties !== undefined && !('additionalProperties' in out)) {
    out.additionalProperties = false;
  }
  return out;
}

/** "path: message; message" for each failed property, nested ones with dotted paths. */
export function describeValidationErrors(
  errors: ValidationErrorLike[],
  rename: (property: string) => string = (p) => p,
  prefix = '',
): string[] {
  const out: string[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : rename(error.property);
    const messages = Object.values(error.constraints ?? {});
    if (messages.length) out.push(`${path}: ${messages.join('; ')}`);
    if (error.children?.length) out.push(...describeValidationErrors(error.children, rename, path));
  }
  return out;
}

/**
 * Validates call arguments against a DTO: converted with class-transformer, checked with
 * class-validator, unknown properties refused (unless the DTO opted out). Resolves to the DTO
 * instance; refuses with `invalid_argument` naming each failed property and constraint.
 */
export async function validateDto(
  cls: DtoClass,
  args: unknown,
  label: string,
  packages: DtoPackages = loadDtoPackages(),
): Promise<object> {
  const plain = args ?? {};
  if (typeof plain !== 'object' || Array.isArray(plain)) {
    throw new AgentValidationError(`${label} must be an object.`);
  }
  const allowsUnknown = dtoAllowsUnknown(cls);
  const instance = packages.transformer.plainToInstance(cls, plain);
  const errors = await packages.validator.validate(instance, {
    whitelist: !allowsUnknown,
    forbidNonWhitelisted: !allowsUnknown,
    // The instance is always of the DTO class; a DTO without rules then means "no arguments".
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  if (errors.length) {
    const valid = Object.keys(
      (dtoJsonSchema(cls, packages).properties as object | undefined) ?? {},
    );
    throw new AgentValidationError(
      `${label} refused: ${describeValidationErrors(errors).join('; ')}. Fix these and call again${valid.length ? ` (accepted: ${valid.join(', ')})` : ''}.`,
    );
  }
  return instance;
}
