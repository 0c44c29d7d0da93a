import type { AgentIdentity } from '../core/agent-identity';
import {
  AccessDeniedError,
  AgentValidationError,
  ObjectNotFoundError,
  ParseAgentConfigError,
  ParseAgentError,
  ParseRequestError,
} from '../core/errors';
import type { ParseSchema } from '../core/parse-schema';
import {
  type DataClassSpec,
  type DataCreateResult,
  type DataFindQuery,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
  type DataPrincipals,
  type DataRow,
} from '../ports/data-path';
import {
  aclGrantsWrite,
  clpWriteDecision,
  pointerFieldsName,
  principalUserId,
  type RowWriteOperation,
} from './acl-write-check';

/** What an ACL-scoped write path is built from (the composition root wires them). */
export interface AclScopedWriteSources {
  /** The identity's own read path, its scope enforced: every read goes there, rows checked too. */
  reads: DataPath;
  /** A master-key path that writes (Parse REST): a write goes there once the checks allowed it. */
  writes: DataPath;
  /** The class's schema, for its class-level permissions; undefined when the class is missing. */
  schema(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined>;
}

const isAclScoped = (identity: AgentIdentity): boolean =>
  identity.authType === 'acl_user' || identity.authType === 'acl_role';

/**
 * The write path of an aclUser or aclRole agent. Parse Server cannot act as a user without a
 * session, or as a role, so the write itself runs with the master key, which Parse exempts from
 * ACL and CLP: this path applies them first, fail-closed. A create needs the class's `create`
 * permission for the agent's principals (its user, that user's roles with inheritance, or the
 * role and the roles it inherits, and `*`); an update or delete needs the class's permission and
 * write access in the row's ACL (pointer permissions: the row must name the user). When the
 * schema or the row cannot be read, nothing is written. Reads go to the agent's scoped read path.
 */
export class AclScopedWritePath implements DataPath {
  readonly kind = 'acl-scoped-write';
  readonly aggregate?: DataPath['aggregate'];
  readonly groupBy?: DataPath['groupBy'];
  readonly groupByDate?: DataPath['groupByDate'];
  readonly distinct?: DataPath['distinct'];
  readonly explain?: DataPath['explain'];
  readonly protectedFields?: DataPath['protectedFields'];

  constructor(
    protected readonly identity: AgentIdentity,
    protected readonly sources: AclScopedWriteSources,
  ) {
    const reads = sources.reads;
    // Only what the read path itself offers: a missing operation stays missing (fail closed).
    this.aggregate = reads.aggregate?.bind(reads);
    this.groupBy = reads.groupBy?.bind(reads);
    this.groupByDate = reads.groupByDate?.bind(reads);
    this.distinct = reads.distinct?.bind(reads);
    this.explain = reads.explain?.bind(reads);
    this.protectedFields = reads.protectedFields?.bind(reads);
  }

  find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]> {
    return this.sources.reads.find(className, query, signal);
  }

  get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined> {
    return this.sources.reads.get(className, objectId, query, signal);
  }

  count(className: string, where: Record<string, unknown>, signal?: AbortSignal): Promise<number> {
    return this.sources.reads.count(className, where, signal);
  }

  async principals(signal?: AbortSignal): Promise<DataPrincipals> {
    return { master: false, principals: await this.principalList(signal) };
  }

  async refreshPrincipals(signal?: AbortSignal): Promise<void> {
    await this.sources.reads.refreshPrincipals?.(signal);
  }

  async create(
    className: string,
    values: DataRow,
    signal?: AbortSignal,
  ): Promise<DataCreateResult> {
    await this.checkClass(className, 'create', signal);
    return this.writer('create').call(this.sources.writes, className, values, signal);
  }

  async update(
    className: string,
    objectId: string,
    values: DataRow,
    signal?: AbortSignal,
  ): Promise<{ updatedAt?: string }> {
    await this.checkRow(className, objectId, 'update', signal);
    return this.writer('update').call(this.sources.writes, className, objectId, values, signal);
  }

  async delete(className: string, objectId: string, signal?: AbortSignal): Promise<void> {
    await this.checkRow(className, objectId, 'delete', signal);
    return this.writer('delete').call(this.sources.writes, className, objectId, signal);
  }

  /**
   * The checks a write would run, without writing: lets a tool refuse before it asks a person to
   * confirm a change that would be refused anyway.
   */
  async checkWrite(
    operation: RowWriteOperation,
    className: string,
    objectId?: string,
    signal?: AbortSignal,
  ): Promise<void> {
    if (operation === 'create') await this.checkClass(className, 'create', signal);
    else await this.checkRow(className, String(objectId), operation, signal);
  }

  createClass(className: string, _spec: DataClassSpec): Promise<void> {
    return Promise.reject(this.schemaChangeRefused('create', className));
  }

  deleteClass(className: string): Promise<void> {
    return Promise.reject(this.schemaChangeRefused('delete', className));
  }

  protected schemaChangeRefused(action: string, className: string): AccessDeniedError {
    return new AccessDeniedError(
      `An ${this.identity.authType === 'acl_role' ? 'aclRole' : 'aclUser'} agent cannot ${action} class '${className}': schema changes need a master-key agent.`,
      { kind: 'clp_denied' },
    );
  }

  protected writer<K extends 'create' | 'update' | 'delete'>(method: K): NonNullable<DataPath[K]> {
    const operation = this.sources.writes[method];
    if (typeof operation !== 'function') {
      throw new ParseAgentConfigError(
        `The '${this.sources.writes.kind}' data path cannot ${method}; ACL-scoped writes need the Parse REST path.`,
      );
    }
    return operation as NonNullable<DataPath[K]>;
  }

  /** The agent's principals from its read path; never the master key (that would skip every check). */
  protected async principalList(signal?: AbortSignal): Promise<string[]> {
    const reads = this.sources.reads;
    if (!reads.principals) {
      throw new ParseAgentConfigError(
        `The '${reads.kind}' read path cannot say who this ${this.identity.authType} agent is (it has no principals()), so its writes are refused.`,
      );
    }
    const who = await reads.principals(signal);
    if (who.master || !Array.isArray(who.principals)) {
      throw new ParseAgentConfigError(
        `The '${reads.kind}' read path answered master-key principals for a ${this.identity.authType} agent; its writes are refused.`,
      );
    }
    return who.principals.includes('*') ? who.principals : ['*', ...who.principals];
  }

  /** The class-level check; returns the principals and any pointer fields each row must satisfy. */
  protected async checkClass(
    className: string,
    operation: RowWriteOperation,
    signal?: AbortSignal,
  ): Promise<{ principals: string[]; pointerFields?: string[] }> {
    const principals = await this.principalList(signal);
    let schema: ParseSchema | undefined;
    try {
      schema = await this.sources.schema(className, signal);
    } catch (error) {
      throw unreadable(`the class-level permissions of '${className}'`, operation, error);
    }
    if (!schema) {
      throw new AgentValidationError(
        `Class '${className}' does not exist; objects can only be written to existing classes.`,
      );
    }
    const decision = clpWriteDecision(schema.classLevelPermissions, operation, principals);
    if (!decision.allowed) {
      throw new AccessDeniedError(
        `Write refused by the class-level permissions (CLP) of '${className}': ${decision.reason} (${this.describe(principals)}). Nothing was changed. Grant '${operation}' to the role or user in the class's permissions, or use an agent whose scope has it.`,
        { kind: 'clp_denied' },
      );
    }
    return { principals, pointerFields: decision.pointerFields };
  }

  /** Class-level check, then the row's ACL (and pointer permissions), read with the master key. */
  protected async checkRow(
    className: string,
    objectId: string,
    operation: 'update' | 'delete',
    signal?: AbortSignal,
  ): Promise<void> {
    const { principals, pointerFields } = await this.checkClass(className, operation, signal);
    let row: DataRow | undefined;
    try {
      // No `keys`: the ACL must come back whatever Parse's projection rules are.
      row = await this.sources.writes.get(className, objectId, {}, signal);
    } catch (error) {
      throw unreadable(`${className}#${objectId} and its ACL`, operation, error);
    }
    if (!row) {
      throw new ObjectNotFoundError(className, objectId);
    }
    if (pointerFields) {
      const userId = principalUserId(principals);
      if (!userId || !pointerFieldsName(row, pointerFields, userId)) {
        throw new AccessDeniedError(
          `Write refused by the class-level permissions (CLP) of '${className}': '${operation}' is granted only to the user named in ${pointerFields.map((f) => `'${f}'`).join(', ')}, and ${className}#${objectId} does not name this agent's user. Nothing was changed.`,
          { kind: 'clp_denied' },
        );
      }
    }
    if (!aclGrantsWrite(row.ACL, principals)) {
      throw new AccessDeniedError(
        `Write refused by the row's ACL: ${className}#${objectId} gives write access to none of this agent's principals (${this.describe(principals)}). Nothing was changed. Add write access for the role or user to the object's ACL, or use an agent that has it.`,
        { kind: 'acl_denied' },
      );
    }
  }

  protected describe(principals: readonly string[]): string {
    const named = principals.filter((p) => p !== '*');
    const who =
      this.identity.authType === 'acl_role'
        ? `aclRole '${this.identity.aclRole}'`
        : `aclUser '${this.identity.aclUser}'`;
    return named.length ? `${who} acts as ${named.join(', ')}` : `${who} acts as no principal`;
  }
}

/** A check that could not read what it needs refuses the write (fail closed), saying why. */
function unreadable(what: string, operation: string, cause: unknown): ParseAgentError {
  // Cancellation and time limits stay what they are.
  if (cause instanceof ParseAgentError && !(cause instanceof ParseRequestError)) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new ParseRequestError(
    `The ${operation} was refused because ${what} could not be read to check it (${detail}). Nothing was changed; try again once Parse Server answers.`,
  );
}

/** How an ACL-scoped write path finds its parts (the composition root passes the router). */
export interface AclScopedWriteProviderOptions {
  /** The provider that writes with the master key (Parse REST). */
  writer: DataPathProvider;
  /** The router the agent's reads go through: the write path reads through it too. */
  reads: {
    pathFor(operation: DataOperation, identity: AgentIdentity): DataPath;
    serves(operation: DataOperation, identity: AgentIdentity): boolean;
  };
  /** Reads a class's schema (its CLP); fresh reads keep a just-tightened permission effective. */
  schema(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined>;
}

/**
 * Serves the 'write' operation to aclUser and aclRole agents only (sessions and the master key
 * write through Parse REST, which enforces their rules itself), when their reads are served: the
 * bound path is an `AclScopedWritePath`.
 */
export class AclScopedWriteProvider implements DataPathProvider {
  readonly kind = 'acl-scoped-write';

  constructor(protected readonly options: AclScopedWriteProviderOptions) {}

  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined {
    if (operation !== 'write' || !isAclScoped(identity)) {
      return 'serves only the writes of aclUser/aclRole agents';
    }
    if (!this.options.reads.serves('find', identity)) {
      return 'no configured path serves this agent’s reads, so its writes cannot be checked';
    }
    return this.options.writer.refusal('write', masterIdentity(identity));
  }

  bind(identity: AgentIdentity): AclScopedWritePath {
    if (!isAclScoped(identity)) {
      throw new ParseAgentConfigError(
        'AclScopedWriteProvider binds only aclUser/aclRole identities.',
      );
    }
    return new AclScopedWritePath(identity, {
      reads: this.options.reads.pathFor('find', identity),
      writes: this.options.writer.bind(masterIdentity(identity)),
      schema: (className, signal) => this.options.schema(className, signal),
    });
  }
}

/** The identity the checked write runs as: the master key, on behalf of the same agent. */
function masterIdentity(identity: AgentIdentity): AgentIdentity {
  return {
    agentId: identity.agentId,
    permissions: identity.permissions,
    authType: 'master_key',
    usingMasterKey: true,
    tenantId: identity.tenantId,
  };
}
