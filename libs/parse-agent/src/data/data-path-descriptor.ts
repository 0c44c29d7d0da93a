import type { EmbeddingStore } from '../ports/embedding-store';
import type { DataPathProvider } from '../ports/data-path';
import type { ParseRestClient } from './parse-rest/parse-rest-client';
import type { ParseDatabaseKind } from './parse-rest/parse-rest-data-path';
import type { ProbeOutcome } from './probe';

/** What the composition root hands a built-in path when it opens it. */
export interface DataPathParts {
  /** Parse REST: session tokens are resolved through `/users/me`. */
  readonly parse: ParseRestClient;
  /** Where the path reports what deserves a warning (an idle connection the server closed). */
  readonly warn?: (message: string) => void;
}

/** A built-in path opened from its option: the provider the router ranks, its probe, its close. */
export interface OpenedDataPath {
  /** The descriptor's kind (`'postgres'`), which is also the provider's. */
  readonly kind: string;
  readonly provider: DataPathProvider;
  /**
   * One cheap read proving the setting (the start-up check). Resolves, never rejects; a failure
   * names the option to fix (`postgres.uri`, `mongo.client`) and never quotes a password.
   */
  probe(timeoutMs: number): Promise<ProbeOutcome>;
  /** Releases what `open` created (a pool or client made from `uri`), never the application's. */
  close(): Promise<void>;
  /** Where this database keeps chunk vectors for semantic_search, when it can. */
  readonly embeddingStore?: EmbeddingStore;
}

/** How a path's connection string is given to the CLI (and named in its messages). */
export interface DataPathUriSetting {
  /** The environment variable (`POSTGRES_URI`). */
  readonly env: string;
  /** The command-line flag (`--postgres-uri`); it draws a warning, since the URI holds a password. */
  readonly flag: `--${string}`;
  /** The schemes a connection string may use, with their colon (`postgres:`, `postgresql:`). */
  readonly schemes: readonly string[];
}

/**
 * One built-in data path, described once: the `forRoot` option it is built from (its `kind` is the
 * option's key), how that option is checked, opened, probed and closed, and how the CLI and the
 * standalone server name it (`database: { kind, uri }`). The hosts iterate the list in
 * `composition/data-paths.ts` and know no path by name.
 */
export interface DataPathDescriptor<K extends string = string, O extends object = object> {
  /** The option key, the `database.kind` of the CLI and the standalone server: `'postgres'`. */
  readonly kind: K;
  /** The database as messages name it: `'PostgreSQL'`. */
  readonly label: string;
  /** What Parse Server stores its data in when this path reads it (`parse.database`). */
  readonly parseDatabase: ParseDatabaseKind;
  readonly uri: DataPathUriSetting;
  /**
   * The option key that takes a pool or client the application owns (`pool`, `client`): used
   * as given, and never closed by the library.
   */
  readonly handleKey: string;
  /** The option for a bare connection string (`{ uri }`), as the CLI and `database` give it. */
  fromUri(uri: string): O;
  /**
   * What is wrong with the option, each problem a sentence starting with the option's name
   * (`postgres needs…`, `postgres.uri must…`); empty when it is usable.
   */
  validate(option: unknown): string[];
  /** Builds the provider. No connection is made here: the driver connects on first use. */
  open(option: O, parts: DataPathParts): OpenedDataPath;
}

/** `postgres:// or postgresql://`: the schemes as a message lists them. */
export function schemesText(schemes: readonly string[]): string {
  return schemes.map((scheme) => `${scheme}//`).join(' or ');
}

/** Whether `uri` starts with one of the schemes followed by `//` (exactly, as Node's URL writes it). */
export function hasScheme(uri: string, schemes: readonly string[]): boolean {
  return schemes.some((scheme) => uri.startsWith(`${scheme}//`));
}
