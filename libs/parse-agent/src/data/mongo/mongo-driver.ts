import { ParseAgentConfigError } from '../../core/errors';

export type MongoDoc = Record<string, unknown>;

/**
 * The part of the official `mongodb` driver this path uses. The driver's Db satisfies it as is; the
 * pure specs evaluate the same calls with mingo over documents in Parse-on-Mongo storage shape.
 */
export interface MongoCursorLike {
  toArray(): Promise<MongoDoc[]>;
  close(): Promise<void>;
  explain?(verbosity?: string): Promise<MongoDoc>;
}

export interface MongoCollectionLike {
  aggregate(pipeline: MongoDoc[], options?: { maxTimeMS?: number }): MongoCursorLike;
  find(filter: MongoDoc, options?: { projection?: MongoDoc; maxTimeMS?: number }): MongoCursorLike;
}

export interface MongoDatabaseLike {
  collection(name: string): MongoCollectionLike;
}

interface MongoClientLike {
  connect(): Promise<unknown>;
  db(name?: string): MongoDatabaseLike;
  close(): Promise<void>;
}

interface MongoDriverModule {
  MongoClient: new (uri: string, options?: Record<string, unknown>) => MongoClientLike;
}

export interface MongoConnection {
  uri?: string;
  /** An existing MongoClient; the library never closes a client it did not open. */
  client?: unknown;
  dbName?: string;
}

/** Loads the optional `mongodb` peer dependency only when the mongo path is configured. */
export function loadMongoDriver(): MongoDriverModule {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('mongodb') as MongoDriverModule;
  } catch (error) {
    const missing =
      (error as { code?: string })?.code === 'MODULE_NOT_FOUND' &&
      String((error as Error).message).includes(`'mongodb'`);
    if (!missing) throw error;
    throw new ParseAgentConfigError(
      "The mongo data path needs the 'mongodb' package, which is not installed. Install it next to nestjs-parse-agent: npm install mongodb",
    );
  }
}

/**
 * Opens (once, on first use) the database the mongo option names. Returns the database and a close
 * function that only closes a client this library created.
 */
export function mongoDatabaseFrom(connection: MongoConnection): {
  db: () => Promise<MongoDatabaseLike>;
  close: () => Promise<void>;
} {
  let opened: Promise<{ client: MongoClientLike; db: MongoDatabaseLike }> | undefined;
  const owned = !connection.client;
  const open = async () => {
    let client = connection.client as MongoClientLike | undefined;
    if (!client) {
      const { MongoClient } = loadMongoDriver();
      client = new MongoClient(connection.uri as string);
      await client.connect();
    }
    return { client, db: client.db(connection.dbName) };
  };
  return {
    db: async () => {
      // A failed connect is not cached: the next call tries again.
      opened ??= open().catch((error: unknown) => {
        opened = undefined;
        throw error;
      });
      return (await opened).db;
    },
    close: async () => {
      if (!opened || !owned) return;
      const { client } = await opened;
      opened = undefined;
      await client.close();
    },
  };
}
