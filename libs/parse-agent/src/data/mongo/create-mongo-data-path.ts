import type { AtlasVectorIndex } from './mongo-vector-search';
import { AgentUnauthorizedError, ParseRequestError } from '../../core/errors';

const invalidSession = () =>
  new AgentUnauthorizedError('The session token is invalid or expired.', {
    reason: 'invalid_session',
  });
import type { ParseRestClient } from '../parse-rest/parse-rest-client';
import { mongoDatabaseFrom, type MongoConnection, type MongoDatabaseLike } from './mongo-driver';
import { MongoDataPathProvider, type MongoPathServices } from './mongo-data-path';
import { MongoPrincipalResolver } from './mongo-principals';
import { MongoSchemaCache } from './mongo-schema';
import { collectionNamer } from './mongo-storage';
import { PARSE_DEFAULT_PROTECTED_FIELDS } from '../parse-server-defaults';

export interface MongoPathOptions extends MongoConnection {
  /** Parse Server's `collectionPrefix`, when it uses one. */
  collectionPrefix?: string;
  /** How long `_SCHEMA` (fields, CLP) is cached (ms, default one hour; `invalidate()` drops it). */
  schemaCacheTtlMs?: number;
  /** How long a user's or role's expanded roles are cached (ms, default 60 s). */
  principalCacheTtlMs?: number;
  /** Parse Server's `protectedFields` option, merged into each class's CLP (default hides `_User.email`). */
  protectedFields?: Record<string, Record<string, string[]>>;
  /**
   * The database is on MongoDB Atlas with Atlas Search indexes: offer the full-text search tools
   * (atlas_text_search, atlas_autocomplete, atlas_faceted_search). Default false: `$search` fails on
   * any other MongoDB, so the tools are not offered there.
   */
  atlasSearch?: boolean;
  /**
   * The database is on MongoDB Atlas with an Atlas Vector Search index over the searchable
   * classes' vectors: semantic_search runs `$vectorSearch` on it. `index` names the index; `path`
   * gives the vector field of a text field (default `<field>Embedding`). Unset: semantic_search is
   * refused on this path, naming this option.
   */
  atlasVectorSearch?: AtlasVectorIndex;
}

/**
 * Builds the direct MongoDB provider. `parse` resolves session tokens through `/users/me` (once per
 * token, cached with the principals); `database` replaces the connection in specs.
 */
export function createMongoDataPathProvider(
  options: MongoPathOptions,
  parse: Pick<ParseRestClient, 'request'>,
  database?: () => Promise<MongoDatabaseLike>,
): MongoDataPathProvider {
  const connection = database
    ? { db: database, close: async () => undefined }
    : mongoDatabaseFrom(options);
  const collection = collectionNamer(options.collectionPrefix);
  const principalTtl = options.principalCacheTtlMs ?? 60_000;
  const sessions = new Map<string, { at: number; userId: Promise<string> }>();
  const services: MongoPathServices = {
    db: connection.db,
    collection,
    schemas: new MongoSchemaCache(connection.db, collection, options.schemaCacheTtlMs ?? 3_600_000),
    principals: new MongoPrincipalResolver(connection.db, collection, principalTtl),
    serverProtectedFields: options.protectedFields ?? PARSE_DEFAULT_PROTECTED_FIELDS,
    ...(options.atlasVectorSearch ? { atlasVectorSearch: options.atlasVectorSearch } : {}),
    sessionUser: (token, signal) => {
      const hit = sessions.get(token);
      if (hit && Date.now() - hit.at < principalTtl) return hit.userId;
      const userId = parse
        .request<{ objectId?: string }>(
          'GET',
          '/users/me',
          undefined,
          { sessionToken: token },
          signal,
        )
        .then((me) => {
          if (typeof me.objectId !== 'string') throw invalidSession();
          return me.objectId;
        })
        .catch((error: unknown) => {
          sessions.delete(token);
          // 209 = invalid session token; anything else (unreachable, aborted) is not the agent's fault.
          if (error instanceof ParseRequestError && error.parseCode === 209) throw invalidSession();
          throw error;
        });
      sessions.set(token, { at: Date.now(), userId });
      return userId;
    },
  };
  return new MongoDataPathProvider(services, connection.close, options.atlasSearch === true);
}
