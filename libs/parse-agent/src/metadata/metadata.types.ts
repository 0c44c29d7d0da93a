import type { PermissionLevel } from '../core/constants';
import type { Where } from '../query/constraint-translator';
import type { DtoClass } from '../validation/dto';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type ModelClass = Function;

/** What tenant-scope callbacks receive: the agent's identity, never its secrets. */
export interface TenantScopeSubject {
  readonly tenantId?: string;
  readonly permissions: PermissionLevel;
  readonly usingMasterKey: boolean;
  readonly authType: string;
  readonly aclRole?: string;
}

export interface TenantScopeOptions {
  /** Returns the tenant value the agent is bound to. Defaults to the agent's `tenantId`. */
  from?: (agent: TenantScopeSubject) => string | number | null | undefined;
  /** Returns true for agents that may read every tenant (e.g. platform admins). */
  bypass?: (agent: TenantScopeSubject) => boolean;
}

export interface FieldDoc {
  property: string;
  field: string;
  description?: string;
  type?: string;
  allowedValues?: Array<{ value: string; description: string }>;
}

export interface AgentFieldOptions {
  description?: string;
  /** Allowed values: a list, or a map of value to meaning. */
  enum?: readonly (string | number)[] | Record<string, string>;
  type?: string;
  /** Wire (Parse column) name when it differs from the property name. */
  field?: string;
}

export type ClassRef = string | (() => ModelClass | string);

export interface RelationDeclaration {
  kind: 'belongsTo' | 'hasMany';
  property: string;
  field?: string;
  target: ClassRef;
  through?: 'relation' | 'pointer';
}

export interface AgentMethodOptions {
  permission?: PermissionLevel;
  description?: string;
  supportsDryRun?: boolean;
  permittedKeys?: string[];
  /**
   * The method's arguments: a JSON Schema, or a class-validator DTO class (its JSON Schema is
   * derived for clients and calls are validated with class-validator).
   */
  parameters?: Record<string, unknown> | DtoClass;
}

export interface AgentMethodDeclaration extends Omit<AgentMethodOptions, 'parameters'> {
  name: string;
  static: boolean;
  /** The JSON Schema clients see (derived from the DTO when one was given). */
  parameters?: Record<string, unknown>;
  /** The DTO class the arguments are validated with, when one was given. */
  parametersDto?: DtoClass;
}

/** How `@AgentSearchable` splits text into chunks (characters). */
export interface SearchableChunking {
  /** Characters per chunk (default 800). */
  size: number;
  /** Characters each chunk shares with the previous one (default 100; less than size). */
  overlap: number;
  /** Most chunks embedded per document and field (default 20); the rest of a long text is not. */
  maxPerDocument: number;
}

export interface AgentSearchableOptions {
  /** Text fields whose chunks are embedded (String fields). */
  fields: string[];
  /** Fields an agent may name in semantic_search's `where` (default none). */
  filterFields?: string[];
  chunk?: Partial<SearchableChunking>;
}

/** `@AgentSearchable` as the registry compiled it: names are columns. */
export interface SearchableDeclaration {
  fields: string[];
  filterFields: string[];
  chunk: SearchableChunking;
}

export interface TenantScope {
  field: string;
  from: NonNullable<TenantScopeOptions['from']>;
  bypass?: TenantScopeOptions['bypass'];
}

export interface RelationEdge {
  from: string;
  to: string;
  via: string;
  cardinality: '1:N' | 'N:M';
}

/** Everything the agent knows about one Parse class, compiled from its decorated model. */
export interface ClassMetadata {
  className: string;
  modelName: string;
  model?: ModelClass;
  description?: string;
  /** How to query or analyse the class (`@AgentDescription(text, { usage })`). */
  usage?: string;
  visible: boolean;
  /** Allowlist in wire names (including objectId/createdAt/updatedAt), or undefined for none. */
  fields?: string[];
  joinFields?: string[];
  largeFields: string[];
  canonicalFilter?: Where;
  tenantScope?: TenantScope;
  /** `@AgentTenantShared()`: no tenant scope, on purpose (its rows belong to every tenant). */
  tenantShared?: boolean;
  allowCollscan: boolean;
  fieldDocs: Record<string, FieldDoc>;
  propertyToWire: Record<string, string>;
  /** Pointer field (wire) -> target class. */
  references: Record<string, string>;
  relations: RelationDeclaration[];
  methods: AgentMethodDeclaration[];
  /** `@AgentSearchable`: embedded text fields, filter fields, chunking. */
  searchable?: SearchableDeclaration;
}
