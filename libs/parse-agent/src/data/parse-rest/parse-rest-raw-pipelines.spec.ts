/**
 * Parse REST `/aggregate` on a MongoDB-backed Parse Server runs the pipeline on the stored
 * documents as they are: `_hashed_password`, `_auth_data_<provider>`, tokens, `_rperm`. The
 * pipeline validator refuses every reference to those names, but a whole document (`$$ROOT`, a
 * `$facet` output, a `$lookup` or `$unionWith` row, a `$push` of `$$ROOT`) carries them along, and
 * MongoDB compares documents field by field: `{ $lt: ['$$ROOT', <a document you build> ] }` bisects a
 * password hash one character at a time. The master-key agent is the only one that reaches this
 * path, and the internal-field floor holds for it too.
 *
 * No MongoDB server runs here. These tests send the agent's pipelines through Parse Server's own
 * code for that route (AggregateRouter.getPipeline and MongoStorageAdapter.aggregate, which rename
 * fields and hand the pipeline to the collection), with mingo standing in for the collection over
 * documents in Parse-on-MongoDB storage shape. Each attack runs on two copies of the data that
 * differ only in credential fields; the answers must be the same.
 */
import 'reflect-metadata';
import { Aggregator } from 'mingo';
import { ParseAgent } from '../../agent/parse-agent';
import { AgentEvents } from '../../core/agent-events';
import type { ParseSchema, SchemaSource } from '../../core/parse-schema';
import { suppressSecurityBanners } from '../../core/security-banner';
import { MetadataRegistry } from '../../metadata/metadata-registry';
import { BUILTIN_TOOLS } from '../../tools/builtin';
import { ToolRegistry } from '../../tools/tool-registry';
import { DataRouter } from '../data-router';
import type { ParseRestClient } from './parse-rest-client';
import { ParseRestDataPathProvider } from './parse-rest-data-path';

/* eslint-disable @typescript-eslint/no-require-imports -- Parse Server's internals, loaded as it loads them */
const { AggregateRouter } = require('parse-server/lib/Routers/AggregateRouter') as {
  AggregateRouter: { getPipeline(body: unknown): Record<string, unknown>[] };
};
const { MongoStorageAdapter } =
  require('parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter') as {
    MongoStorageAdapter: new (options: { uri: string }) => {
      _adaptiveCollection: (name: string) => Promise<unknown>;
      aggregate(
        className: string,
        schema: unknown,
        pipeline: Record<string, unknown>[],
      ): Promise<Record<string, unknown>[]>;
    };
  };
/* eslint-enable @typescript-eslint/no-require-imports */

suppressSecurityBanners();

type Doc = Record<string, unknown>;

const FIELDS: Record<string, ParseSchema['fields']> = {
  _User: {
    objectId: { type: 'String' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
    ACL: { type: 'ACL' },
    username: { type: 'String' },
    password: { type: 'String' },
    email: { type: 'String' },
    emailVerified: { type: 'Boolean' },
    authData: { type: 'Object' },
  },
  Note: {
    objectId: { type: 'String' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
    ACL: { type: 'ACL' },
    title: { type: 'String' },
    owner: { type: 'Pointer', targetClass: '_User' },
  },
};

const at = new Date('2026-01-02T03:04:05Z');

/** Users as Parse stores them on MongoDB; `secret` fills every credential column. */
function storedUsers(secret: string): Doc[] {
  return ['alice', 'bob', 'carol'].map((name, i) => ({
    _id: `u${i}`,
    _created_at: at,
    _updated_at: at,
    username: name,
    email: `${name}@example.com`,
    emailVerified: true,
    _hashed_password: `$2b$10$${secret}${name}`,
    _password_history: [`$2b$10$old${secret}`],
    _auth_data_anonymous: { id: `anon-${secret}-${name}` },
    _email_verify_token: `verify-${secret}`,
    _perishable_token: `reset-${secret}`,
    _failed_login_count: secret.length,
    _rperm: ['*', `u${i}`],
    _wperm: [`u${i}`],
    _acl: { [`u${i}`]: { r: true, w: true } },
  }));
}

const storedNotes: Doc[] = [0, 1, 2].map((i) => ({
  _id: `n${i}`,
  _created_at: at,
  _updated_at: at,
  title: `note ${i}`,
  _p_owner: `_User$u${i}`,
}));

/**
 * Parse REST's client as the REST path uses it for aggregate, answering with Parse Server's own
 * aggregate code over the stored documents (mingo is the collection).
 */
function parseOverMongo(users: Doc[]): ParseRestClient {
  const collections: Record<string, Doc[]> = { _User: users, Note: storedNotes };
  const adapter = new MongoStorageAdapter({ uri: 'mongodb://127.0.0.1:1/unused' });
  adapter._adaptiveCollection = async (name: string) => ({
    aggregate: async (pipeline: Record<string, unknown>[]) =>
      new Aggregator(pipeline, {
        collectionResolver: (other: string) => structuredClone(collections[other] ?? []),
      }).run(structuredClone(collections[name] ?? [])),
  });
  const client = {
    aggregate: async (className: string, pipeline: Record<string, unknown>[]) => {
      // The REST client sends the pipeline as JSON; the router and the adapter rewrite it.
      const staged = AggregateRouter.getPipeline({
        pipeline: JSON.parse(JSON.stringify(pipeline)),
      });
      return adapter.aggregate(className, { className, fields: FIELDS[className] }, staged);
    },
  };
  return client as unknown as ParseRestClient;
}

function masterAgentOver(users: Doc[]): ParseAgent {
  const table = new Map<string, ParseSchema>(
    Object.entries(FIELDS).map(([className, fields]) => [className, { className, fields }]),
  );
  const schemas: SchemaSource = {
    get: async (className) => table.get(className),
    all: async () => table,
    invalidate: () => undefined,
  };
  return new ParseAgent(
    {},
    {
      data: new DataRouter([new ParseRestDataPathProvider(parseOverMongo(users), 'mongo')]),
      schemas,
      metadata: new MetadataRegistry({ unregisteredClasses: 'visible' }),
      tools: new ToolRegistry(BUILTIN_TOOLS),
      events: new AgentEvents(),
    },
  );
}

/**
 * A document to compare against: bob's stored document, field for field, with guessed credential
 * values. MongoDB orders documents field by field in stored order, so the comparison says whether
 * bob's stored hash sorts before the guessed one; mingo orders them by sorted field names, so
 * there it says the same of his anonymous authData. Either way the answer depends on a secret.
 */
const guess = (prefix: string) => ({
  $arrayToObject: {
    $concatArrays: [
      { $literal: [['_id', 'u1']] },
      [['_created_at', { $toDate: at.toISOString() }]],
      [['_updated_at', { $toDate: at.toISOString() }]],
      {
        $literal: [
          ['username', 'bob'],
          ['email', 'bob@example.com'],
          ['emailVerified', true],
          ['_hashed_password', `$2b$10$${prefix}`],
          ['_password_history', [`$2b$10$old${prefix}`]],
          ['_auth_data_anonymous', { id: `anon-${prefix}` }],
          ['_email_verify_token', `verify-${prefix}`],
          ['_perishable_token', `reset-${prefix}`],
          ['_failed_login_count', 4],
          ['_rperm', ['*', 'u1']],
          ['_wperm', ['u1']],
          ['_acl', { u1: { r: true, w: true } }],
        ],
      },
    ],
  },
});

const ATTACKS: Array<[string, string, unknown[]]> = [
  [
    '$$ROOT compared with a built document',
    '_User',
    [{ $match: { $expr: { $lt: ['$$ROOT', guess('M')] } } }, { $count: 'n' }],
  ],
  [
    '$$CURRENT compared in a $project',
    '_User',
    [{ $project: { below: { $lt: ['$$CURRENT', guess('M')] } } }],
  ],
  [
    '$push of $$ROOT, then a comparison',
    '_User',
    [
      { $group: { _id: null, all: { $push: '$$ROOT' } } },
      { $project: { below: { $lt: [{ $arrayElemAt: ['$all', 1] }, guess('M')] } } },
    ],
  ],
  [
    'a $facet output, then a comparison',
    '_User',
    [
      { $facet: { all: [] } },
      { $project: { below: { $lt: [{ $arrayElemAt: ['$all', 1] }, guess('M')] } } },
    ],
  ],
  ['$objectToArray of $$ROOT', '_User', [{ $project: { pairs: { $objectToArray: '$$ROOT' } } }]],
  [
    'a $lookup row, then a comparison',
    'Note',
    [
      { $lookup: { from: '_User', localField: 'owner', foreignField: 'objectId', as: 'who' } },
      { $project: { below: { $lt: [{ $arrayElemAt: ['$who', 1] }, guess('M')] } } },
    ],
  ],
  [
    'a $unionWith row, then a comparison',
    'Note',
    [
      { $unionWith: { coll: '_User', pipeline: [] } },
      { $match: { $expr: { $lt: ['$$ROOT', guess('M')] } } },
      { $count: 'n' },
    ],
  ],
];

describe('Parse REST /aggregate on MongoDB: no answer depends on a credential column (Parse Server’s aggregate code, mingo as the collection)', () => {
  const first = masterAgentOver(storedUsers('AAAA'));
  const second = masterAgentOver(storedUsers('ZZZZ'));

  it.each(ATTACKS)('%s', async (_name, className, pipeline) => {
    const a = await first.execute('aggregate', { class_name: className, pipeline });
    const b = await second.execute('aggregate', { class_name: className, pipeline });
    expect(JSON.stringify(b)).toEqual(JSON.stringify(a));
    // Nothing credential-like comes back as a value either.
    expect(JSON.stringify([a, b])).not.toMatch(/AAAA|ZZZZ|\$2b\$|anon-|verify-|reset-/);
  });

  it('still answers ordinary pipelines over the stored documents (the route is real)', async () => {
    const grouped = await first.execute('aggregate', {
      class_name: '_User',
      pipeline: [{ $match: { emailVerified: true } }, { $group: { _id: null, n: { $sum: 1 } } }],
    });
    expect(grouped).toMatchObject({ success: true, data: { results: [{ n: 3 }] } });
    const names = await first.execute('aggregate', {
      class_name: '_User',
      pipeline: [{ $sort: { username: 1 } }, { $project: { username: 1 } }],
    });
    expect(names).toMatchObject({
      success: true,
      data: { results: [{ username: 'alice' }, { username: 'bob' }, { username: 'carol' }] },
    });
  });
});
