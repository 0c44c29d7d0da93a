import { ParseAgentConfigError } from '../core/errors';
import type {
  DataPathDescriptor,
  DataPathParts,
  OpenedDataPath,
} from '../data/data-path-descriptor';
import { mongoDataPath } from '../data/mongo/mongo.descriptor';
import type { ParseDatabaseKind } from '../data/parse-rest/parse-rest-data-path';
import { postgresDataPath } from '../data/postgres/postgres.descriptor';

/**
 * The library's built-in direct database paths, the one list every host iterates: the Nest
 * module, `createAgentServices`, the start-up check, the standalone server and the CLI. A new
 * built-in path is its folder under `data/` (path, provider, probe, descriptor) and one entry here.
 */
export const BUILTIN_DATA_PATHS = [postgresDataPath, mongoDataPath] as const;

type BuiltinDataPath = (typeof BUILTIN_DATA_PATHS)[number];

/** The option a descriptor is built from. */
type OptionOf<D> = D extends DataPathDescriptor<string, infer O> ? O : never;

/** The kinds of the built-in paths: `'postgres' | 'mongo'`. */
export type DataPathKind = BuiltinDataPath['kind'];

/** The option of one built-in path, by kind. */
export type DataPathOption<K extends DataPathKind> = OptionOf<
  Extract<BuiltinDataPath, { kind: K }>
>;

/** `{ postgres?: …; mongo?: … }`: each built-in path's option under its kind. */
export type DataPathOptions = { [D in BuiltinDataPath as D['kind']]?: OptionOf<D> };

/** A direct database path named by a connection string: the CLI's and the standalone server's. */
export interface DatabaseSetting {
  kind: DataPathKind;
  uri: string;
}

const byKind = (kind: unknown) => BUILTIN_DATA_PATHS.find((path) => path.kind === kind);

/** The built-in path of a kind, typed loosely for loops over options. */
export function dataPathDescriptor(kind: unknown): DataPathDescriptor | undefined {
  return byKind(kind) as DataPathDescriptor | undefined;
}

/** Each built-in path's option as the given options hold it (undefined when not configured). */
export function dataPathOptionsOf(options: DataPathOptions): DataPathOptions {
  const out: Record<string, unknown> = {};
  for (const path of BUILTIN_DATA_PATHS) {
    const option = options[path.kind];
    if (option !== undefined) out[path.kind] = option;
  }
  return out as DataPathOptions;
}

/**
 * `database: { kind, uri }` as options: the path's option (`{ postgres: { uri } }`) and what
 * Parse Server stores its data in. Throws a ParseAgentConfigError naming `database.kind` when the
 * kind is no built-in path's.
 */
export function databaseOptions(
  setting: DatabaseSetting | undefined,
  optionsName: string,
): { paths: DataPathOptions; parseDatabase?: ParseDatabaseKind } {
  if (setting === undefined) return { paths: {} };
  const path = dataPathDescriptor(setting?.kind);
  if (!path || typeof setting.uri !== 'string' || !setting.uri) {
    throw new ParseAgentConfigError(
      `${optionsName}: database must be { kind, uri } with kind ${BUILTIN_DATA_PATHS.map((p) => `'${p.kind}'`).join(' or ')} and a connection string (got kind ${JSON.stringify(setting?.kind)}).`,
    );
  }
  return {
    paths: { [path.kind]: path.fromUri(setting.uri) } as DataPathOptions,
    parseDatabase: path.parseDatabase,
  };
}

/** Opens every built-in path the options configure, in the list's order. */
export function openDataPaths(options: DataPathOptions, parts: DataPathParts): OpenedDataPath[] {
  const opened: OpenedDataPath[] = [];
  for (const path of BUILTIN_DATA_PATHS) {
    const option = options[path.kind];
    if (option !== undefined) {
      opened.push((path as DataPathDescriptor).open(option as object, parts));
    }
  }
  return opened;
}
