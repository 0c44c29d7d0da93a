import { AccessDeniedError, AgentValidationError, SecurityBlockedError } from '../../core/errors';
import { PipelinePolicy, Where } from './pipeline-policy';
import { LOOKUP_LOCAL_VARIABLE, validatePipeline } from './pipeline-validator';

/**
 * Order: tenant-scoped, allowlisted. Customer: tenant-scoped, no allowlist. Secret: hidden.
 * Tag: unscoped, unrestricted. Note: unscoped, allowlisted.
 */
function makePolicy(): PipelinePolicy & { checked: string[] } {
  const checked: string[] = [];
  const allow: Record<string, string[]> = {
    Order: ['status', 'amount', 'customer', 'items', 'orgId'],
    Note: ['body'],
  };
  const scopes: Record<string, Where[]> = {
    Order: [{ orgId: 't1' }, { isTest: { $ne: true } }],
    Customer: [{ orgId: 't1' }],
  };
  return {
    checked,
    assertClassReadable(className: string) {
      checked.push(className);
      if (className === 'Secret') {
        throw new AccessDeniedError(`Class ${className} is hidden`, { kind: 'hidden_class' });
      }
    },
    allowedFields: (c) => (allow[c] ? new Set(allow[c]) : undefined),
    scopeMatches: (c) => scopes[c] ?? [],
    pointerTargets: (c): Record<string, string> => (c === 'Order' ? { customer: 'Customer' } : {}),
  };
}

function run(pipeline: unknown, className = 'Order', policy = makePolicy()) {
  return validatePipeline(className, pipeline, policy);
}

function denied(fn: () => unknown): AccessDeniedError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AccessDeniedError) return e;
    throw e;
  }
  throw new Error('expected AccessDeniedError, nothing was thrown');
}

describe('validatePipeline: scope injection', () => {
  it('opens the root pipeline with each scope layer as its own $match, then the allowlist projection', () => {
    const { pipeline } = run([{ $match: { status: 'paid' } }, { $limit: 5 }]);
    expect(pipeline).toEqual([
      { $match: { orgId: 't1' } },
      { $match: { isTest: { $ne: true } } },
      {
        $project: {
          objectId: 1,
          createdAt: 1,
          updatedAt: 1,
          amount: 1,
          customer: 1,
          items: 1,
          orgId: 1,
          status: 1,
        },
      },
      { $match: { status: 'paid' } },
      { $limit: 5 },
    ]);
  });

  it('never lets a caller $match replace the scope: the scope stages stay first', () => {
    const { pipeline } = run([{ $match: { orgId: 't2' } }, { $limit: 1 }]);
    expect(pipeline[0]).toEqual({ $match: { orgId: 't1' } });
  });

  it('rewrites a localField/foreignField $lookup on a scoped class into let + pipeline with the scope first', () => {
    const { pipeline } = run([
      { $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: 'c' } },
      { $limit: 1 },
    ]);
    const lookup = pipeline[3].$lookup as Record<string, unknown>;
    expect(lookup.localField).toBeUndefined();
    expect(lookup.let).toEqual({ [LOOKUP_LOCAL_VARIABLE]: '$customer' });
    const sub = lookup.pipeline as Record<string, unknown>[];
    expect(sub[0]).toEqual({ $match: { orgId: 't1' } });
    expect(JSON.stringify(sub[1])).toContain('$objectId');
  });

  it('keeps a localField/foreignField $lookup as-is when the joined class has no scope and no allowlist', () => {
    const { pipeline } = run([
      { $lookup: { from: 'Tag', localField: 'items', foreignField: 'name', as: 't' } },
      { $limit: 1 },
    ]);
    expect(pipeline[3]).toEqual({
      $lookup: { from: 'Tag', localField: 'items', foreignField: 'name', as: 't' },
    });
  });

  it('prefixes a $lookup pipeline with the joined class scope and allowlist projection', () => {
    const { pipeline } = run(
      [
        {
          $lookup: {
            from: 'Order',
            let: { c: '$objectId' },
            pipeline: [{ $match: { status: 'x' } }],
            as: 'o',
          },
        },
      ],
      'Customer',
    );
    const sub = (pipeline[1].$lookup as { pipeline: unknown[] }).pipeline;
    expect(sub.slice(0, 2)).toEqual([
      { $match: { orgId: 't1' } },
      { $match: { isTest: { $ne: true } } },
    ]);
    expect(Object.keys(sub[2] as object)).toEqual(['$project']);
    expect(sub[3]).toEqual({ $match: { status: 'x' } });
  });

  it('scopes nested sub-pipelines too ($facet > $lookup)', () => {
    const { pipeline } = run([
      { $facet: { a: [{ $lookup: { from: 'Customer', pipeline: [], as: 'c' } }] } },
    ]);
    const facet = pipeline[3].$facet as Record<string, Record<string, { pipeline: unknown[] }>[]>;
    expect(facet.a[0].$lookup.pipeline[0]).toEqual({ $match: { orgId: 't1' } });
  });

  it('normalizes $unionWith and prefixes its pipeline with the scope', () => {
    const { pipeline } = run(
      ['x'].map(() => ({ $unionWith: 'Customer' })),
      'Tag',
    );
    expect(pipeline[0]).toEqual({
      $unionWith: { coll: 'Customer', pipeline: [{ $match: { orgId: 't1' } }] },
    });
  });

  it('refuses $graphLookup on a scoped class (a recursive search cannot carry the scope)', () => {
    const e = denied(() =>
      run(
        [
          {
            $graphLookup: {
              from: 'Customer',
              startWith: '$x',
              connectFromField: 'a',
              connectToField: 'b',
              as: 'g',
            },
          },
        ],
        'Tag',
      ),
    );
    expect(e.kind).toBe('tenant_scope');
  });

  it('refuses $graphLookup on an allowlisted class (whole documents cannot be projected)', () => {
    const e = denied(() =>
      run(
        [
          {
            $graphLookup: {
              from: 'Note',
              startWith: '$x',
              connectFromField: 'body',
              connectToField: 'body',
              as: 'g',
            },
          },
        ],
        'Tag',
      ),
    );
    expect(e.kind).toBe('field_denied');
  });

  it('allows $graphLookup on an unscoped, unrestricted class', () => {
    expect(() =>
      run(
        [
          {
            $graphLookup: {
              from: 'Tag',
              startWith: '$parent',
              connectFromField: 'parent',
              connectToField: 'name',
              as: 'g',
            },
          },
        ],
        'Tag',
      ),
    ).not.toThrow();
  });
});

describe('validatePipeline: class gate on every class a stage names', () => {
  const cases: [string, unknown[]][] = [
    [
      '$lookup.from',
      [{ $lookup: { from: 'Secret', localField: 'a', foreignField: 'b', as: 's' } }],
    ],
    [
      '$lookup inside $facet',
      [{ $facet: { x: [{ $lookup: { from: 'Secret', pipeline: [], as: 's' } }] } }],
    ],
    [
      '$lookup inside $lookup.pipeline',
      [
        {
          $lookup: {
            from: 'Tag',
            pipeline: [{ $lookup: { from: 'Secret', pipeline: [], as: 's' } }],
            as: 't',
          },
        },
      ],
    ],
    ['$unionWith string', [{ $unionWith: 'Secret' }]],
    ['$unionWith.coll', [{ $unionWith: { coll: 'Secret', pipeline: [] } }]],
    [
      '$graphLookup.from',
      [
        {
          $graphLookup: {
            from: 'Secret',
            startWith: '$a',
            connectFromField: 'a',
            connectToField: 'b',
            as: 'g',
          },
        },
      ],
    ],
  ];
  it.each(cases)('refuses a hidden class named in %s', (_label, pipeline) => {
    expect(denied(() => run(pipeline, 'Tag')).kind).toBe('hidden_class');
  });

  it('refuses a hidden root class', () => {
    expect(denied(() => run([], 'Secret')).kind).toBe('hidden_class');
  });

  it('reports every class read, root first', () => {
    const policy = makePolicy();
    const r = run(
      [{ $lookup: { from: 'Customer', pipeline: [], as: 'c' } }, { $unionWith: 'Tag' }],
      'Order',
      policy,
    );
    expect(r.classes).toEqual(['Order', 'Customer', 'Tag']);
    expect(policy.checked).toEqual(['Order', 'Customer', 'Tag']);
  });

  it('refuses class names that are not Parse identifiers', () => {
    expect(() => run([{ $unionWith: 'a.b' }], 'Tag')).toThrow(AgentValidationError);
  });
});

describe('validatePipeline: server-side JS and writing stages at any depth', () => {
  const cases: [string, unknown[]][] = [
    ['$out', [{ $out: 'x' }]],
    ['$merge', [{ $merge: { into: 'x' } }]],
    ['$where in $match', [{ $match: { $where: 'this.a' } }]],
    [
      '$function in $addFields',
      [{ $addFields: { x: { $function: { body: 'f', args: [], lang: 'js' } } } }],
    ],
    ['$accumulator in $group', [{ $group: { _id: null, x: { $accumulator: {} } } }]],
    ['$where inside $facet', [{ $facet: { a: [{ $match: { $where: '1' } }] } }]],
    [
      '$out inside $lookup.pipeline',
      [{ $lookup: { from: 'Tag', pipeline: [{ $out: 'y' }], as: 't' } }],
    ],
    [
      '$merge inside $unionWith.pipeline',
      [{ $unionWith: { coll: 'Tag', pipeline: [{ $merge: 'y' }] } }],
    ],
    [
      '$function deep in $expr',
      [{ $match: { $expr: { $and: [{ $eq: [1, { $function: {} }] }] } } }],
    ],
    ['$where inside $elemMatch', [{ $match: { items: { $elemMatch: { $where: '1' } } } }]],
    ['$function inside $literal', [{ $project: { x: { $literal: { $function: 1 } } } }]],
  ];
  it.each(cases)('refuses %s', (_label, pipeline) => {
    expect(() => run(pipeline, 'Tag')).toThrow(SecurityBlockedError);
  });
});

describe('validatePipeline: internal fields at any depth', () => {
  const cases: [string, unknown[]][] = [
    ['field ref in $group', [{ $group: { _id: '$_rperm' } }]],
    ['key in $match', [{ $match: { _wperm: 'x' } }]],
    ['key in $project', [{ $project: { _hashed_password: 1 } }]],
    ['exclusion key in $project', [{ $project: { _session_token: 0 } }]],
    ['output name in $addFields', [{ $addFields: { _acl: 1 } }]],
    ['ref in $addFields', [{ $addFields: { a: { $concat: ['$_email_verify_token'] } } }]],
    [
      '$lookup.localField',
      [{ $lookup: { from: 'Tag', localField: '_perishable_token', foreignField: 'a', as: 'x' } }],
    ],
    [
      '$lookup.foreignField',
      [{ $lookup: { from: 'Tag', localField: 'a', foreignField: '_tombstone', as: 'x' } }],
    ],
    ['$getField name', [{ $project: { a: { $getField: '_failed_login_count' } } }]],
    [
      '$getField object form',
      [{ $project: { a: { $getField: { field: '_account_lockout_expires_at', input: '$x' } } } }],
    ],
    ['authData', [{ $project: { authData: 1 } }]],
    ['_auth_data_ prefix', [{ $match: { '_auth_data_facebook.id': '1' } }]],
    ['sessionToken', [{ $sort: { sessionToken: 1 } }]],
    ['deviceToken', [{ $group: { _id: '$deviceToken' } }]],
    ['_password_history', [{ $unwind: '$_password_history' }]],
    ['nested segment', [{ $project: { a: '$joined._rperm' } }]],
    ['$$ROOT path', [{ $project: { a: '$$ROOT._rperm' } }]],
    [
      'user variable path',
      [{ $project: { a: { $map: { input: '$xs', as: 'x', in: '$$x._hashed_password' } } } }],
    ],
    ['inside $facet', [{ $facet: { f: [{ $group: { _id: '$_rperm' } }] } }]],
    [
      'inside $lookup.pipeline',
      [{ $lookup: { from: 'Tag', pipeline: [{ $match: { _rperm: 'x' } }], as: 'x' } }],
    ],
    ['$unset name', [{ $unset: ['_wperm'] }]],
    ['$count name', [{ $count: '_rperm' }]],
    ['$unwind includeArrayIndex', [{ $unwind: { path: '$a', includeArrayIndex: '_wperm' } }]],
    ['$elemMatch sub-key', [{ $match: { items: { $elemMatch: { _rperm: 'x' } } } }]],
    ['inside $literal', [{ $project: { x: { $literal: '$_rperm' } } }]],
  ];
  it.each(cases)('refuses %s', (_label, pipeline) => {
    expect(denied(() => run(pipeline, 'Tag')).kind).toBe('internal_field');
  });

  it('refuses internal fields even when the class allowlist names them', () => {
    const policy = makePolicy();
    policy.allowedFields = () => new Set(['_rperm', 'a']);
    expect(denied(() => run([{ $project: { _rperm: 1 } }], 'Tag', policy)).kind).toBe(
      'internal_field',
    );
    expect(JSON.stringify(run([], 'Tag', policy).pipeline)).not.toContain('_rperm');
  });
});

describe('validatePipeline: storage-form references', () => {
  it('refuses $_p_author with the API name as suggested rewrite', () => {
    const e = denied(() => run([{ $group: { _id: '$_p_customer', n: { $sum: 1 } } }]));
    expect(e.kind).toBe('storage_form_field_ref');
    expect(e.details).toMatchObject({
      denied_field: '_p_customer',
      suggested_rewrite: '$customer',
    });
    expect(e.message).toContain("'$customer'");
  });

  it('suggests the bare name for keys', () => {
    const e = denied(() => run([{ $match: { _p_customer: 'Customer$1' } }]));
    expect(e.details).toMatchObject({ suggested_rewrite: 'customer' });
  });

  it.each([
    ['_created_at', 'createdAt'],
    ['_updated_at', 'updatedAt'],
    ['_id', 'objectId'],
  ])('refuses %s before any $group, suggesting %s', (storage, api) => {
    const e = denied(() => run([{ $sort: { [storage]: 1 } }]));
    expect(e.kind).toBe('storage_form_field_ref');
    expect(e.info.suggestedRewrite).toBe(api);
  });

  it('refuses a storage spelling in a $lookup localField', () => {
    const e = denied(() =>
      run([
        {
          $lookup: {
            from: 'Customer',
            localField: '_p_customer',
            foreignField: 'objectId',
            as: 'c',
          },
        },
      ]),
    );
    expect(e.info.suggestedRewrite).toBe('customer');
  });

  it('allows _id after $group (it is the group key there) and "_id": 0 in $project', () => {
    expect(() =>
      run([
        { $group: { _id: '$status', n: { $sum: 1 } } },
        { $sort: { _id: 1 } },
        { $project: { _id: 1, n: 1 } },
      ]),
    ).not.toThrow();
    expect(() => run([{ $project: { _id: 0, status: 1 } }])).not.toThrow();
  });
});

describe('validatePipeline: forward-pass field allowlist', () => {
  it('refuses a source field outside the allowlist, listing the allowed fields', () => {
    const e = denied(() => run([{ $match: { ssn: '1' } }]));
    expect(e.kind).toBe('field_denied');
    expect(e.info.deniedField).toBe('ssn');
    expect(e.info.allowedFields).toEqual(expect.arrayContaining(['status', 'amount', 'objectId']));
  });

  it.each([
    ['$project inclusion', [{ $project: { ssn: 1 } }]],
    ['$project expression', [{ $project: { x: '$ssn' } }]],
    ['$group key', [{ $group: { _id: '$ssn' } }]],
    ['$group accumulator', [{ $group: { _id: null, x: { $max: '$ssn' } } }]],
    ['$sort', [{ $sort: { ssn: 1 } }]],
    ['$expr', [{ $match: { $expr: { $gt: ['$ssn', 1] } } }]],
    ['$or clause', [{ $match: { $or: [{ status: 'a' }, { ssn: 'b' }] } }]],
    ['$unwind', [{ $unwind: '$ssn' }]],
    ['$getField', [{ $project: { x: { $getField: 'ssn' } } }]],
    ['$$ROOT.path', [{ $project: { x: '$$ROOT.ssn' } }]],
    ['$bucket groupBy', [{ $bucket: { groupBy: '$ssn', boundaries: [0, 1] } }]],
    ['$sortByCount', [{ $sortByCount: '$ssn' }]],
    ['$lookup let', [{ $lookup: { from: 'Tag', let: { s: '$ssn' }, pipeline: [], as: 't' } }]],
    ['dotted $addFields into a hidden field', [{ $addFields: { 'ssn.x': 1 } }]],
    [
      '$setWindowFields partitionBy',
      [{ $setWindowFields: { partitionBy: '$ssn', output: { n: { $sum: 1 } } } }],
    ],
  ])('refuses a hidden source field in %s', (_label, pipeline) => {
    expect(denied(() => run(pipeline)).kind).toBe('field_denied');
  });

  it('allows fields produced by $group downstream (group -> match -> sort -> limit)', () => {
    expect(() =>
      run([
        { $group: { _id: '$status', total_sum: { $sum: '$amount' } } },
        { $match: { total_sum: { $gt: 100 } } },
        { $sort: { total_sum: -1 } },
        { $limit: 10 },
      ]),
    ).not.toThrow();
  });

  it('after $group only the produced fields exist: source fields are refused', () => {
    const e = denied(() =>
      run([{ $group: { _id: '$status', n: { $sum: 1 } } }, { $match: { amount: 1 } }]),
    );
    expect(e.kind).toBe('field_denied');
    expect(e.info.allowedFields).toEqual(['_id', 'n']);
  });

  it('after $project only the projected fields (and objectId) exist', () => {
    expect(() =>
      run([{ $project: { status: 1 } }, { $sort: { objectId: 1, status: 1 } }]),
    ).not.toThrow();
    expect(denied(() => run([{ $project: { status: 1 } }, { $sort: { amount: 1 } }])).kind).toBe(
      'field_denied',
    );
  });

  it.each([
    [
      '$addFields',
      [{ $addFields: { double: { $multiply: ['$amount', 2] } } }, { $sort: { double: 1 } }],
    ],
    ['$set', [{ $set: { d: 1 } }, { $match: { d: 1 } }]],
    ['$lookup.as', [{ $lookup: { from: 'Tag', pipeline: [], as: 'tags' } }, { $unwind: '$tags' }]],
    [
      '$unwind includeArrayIndex',
      [{ $unwind: { path: '$items', includeArrayIndex: 'i' } }, { $sort: { i: 1 } }],
    ],
    ['$count', [{ $count: 'total' }, { $project: { total: 1 } }]],
    [
      '$bucket output',
      [
        { $bucket: { groupBy: '$amount', boundaries: [0, 10], output: { c: { $sum: 1 } } } },
        { $sort: { c: 1 } },
      ],
    ],
    [
      '$bucketAuto default count',
      [{ $bucketAuto: { groupBy: '$amount', buckets: 2 } }, { $sort: { count: 1 } }],
    ],
    ['$sortByCount', [{ $sortByCount: '$status' }, { $match: { count: { $gt: 1 } } }]],
    ['$facet names', [{ $facet: { a: [{ $count: 'n' }] } }, { $project: { a: 1 } }]],
    [
      '$replaceRoot literal',
      [{ $replaceRoot: { newRoot: { s: '$status' } } }, { $sort: { s: 1 } }],
    ],
    [
      '$setWindowFields output',
      [
        { $setWindowFields: { sortBy: { amount: 1 }, output: { r: { $sum: 1 } } } },
        { $sort: { r: 1 } },
      ],
    ],
  ])('allows downstream use of a field produced by %s', (_label, pipeline) => {
    expect(() => run(pipeline)).not.toThrow();
  });

  it('checks each $facet branch from the point it diverged', () => {
    expect(() =>
      run([{ $facet: { a: [{ $group: { _id: '$status' } }], b: [{ $match: { amount: 1 } }] } }]),
    ).not.toThrow();
    expect(
      denied(() =>
        run([{ $facet: { a: [{ $group: { _id: '$status' } }, { $match: { amount: 1 } }] } }]),
      ).kind,
    ).toBe('field_denied');
  });

  it('checks a $lookup pipeline against the joined class allowlist, not the root one', () => {
    expect(() =>
      run([{ $lookup: { from: 'Note', pipeline: [{ $match: { body: 'x' } }], as: 'n' } }]),
    ).not.toThrow();
    expect(
      denied(() =>
        run([{ $lookup: { from: 'Note', pipeline: [{ $match: { status: 'x' } }], as: 'n' } }]),
      ).kind,
    ).toBe('field_denied');
    expect(
      denied(() =>
        run([{ $lookup: { from: 'Note', localField: 'status', foreignField: 'secret', as: 'n' } }]),
      ).kind,
    ).toBe('field_denied');
  });

  it('refuses computed $getField names (they could reach any column)', () => {
    expect(() =>
      run([{ $project: { x: { $getField: { field: { $concat: ['s', 'sn'] } } } } }]),
    ).toThrow(AgentValidationError);
  });

  it('refuses $objectToArray when a class read has no allowlist (names would become values)', () => {
    expect(
      denied(() => run([{ $project: { kv: { $objectToArray: '$$ROOT' } } }], 'Tag')).info
        .deniedField,
    ).toBe('$objectToArray');
    expect(() => run([{ $project: { kv: { $objectToArray: '$$ROOT' } } }], 'Order')).not.toThrow();
  });

  it('refuses $text and $jsonSchema, which test fields the agent may not read', () => {
    expect(denied(() => run([{ $match: { $text: { $search: 'x' } } }])).kind).toBe('field_denied');
    expect(denied(() => run([{ $match: { $jsonSchema: { required: ['ssn'] } } }])).kind).toBe(
      'field_denied',
    );
  });

  it('refuses $lookup along a pointer into the wrong class', () => {
    expect(() =>
      run([
        { $lookup: { from: 'Tag', localField: 'customer', foreignField: 'objectId', as: 'c' } },
      ]),
    ).toThrow(/points to Customer/);
  });
});

describe('validatePipeline: auto $limit', () => {
  it('appends { $limit: 200 } when the last stage is not $limit or $count', () => {
    const r = run([{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { n: -1 } }], 'Tag');
    expect(r.autoLimited).toBe(true);
    expect(r.pipeline[r.pipeline.length - 1]).toEqual({ $limit: 200 });
  });

  it('appends it to an empty pipeline', () => {
    expect(run([], 'Tag').pipeline).toEqual([{ $limit: 200 }]);
  });

  it('does not append after a terminal $limit, $count or single-row $group', () => {
    expect(run([{ $limit: 5 }], 'Tag').autoLimited).toBe(false);
    expect(run([{ $count: 'n' }], 'Tag').autoLimited).toBe(false);
    expect(run([{ $group: { _id: null, n: { $sum: 1 } } }], 'Tag').autoLimited).toBe(false);
  });

  it('a $limit that is not last does not count', () => {
    expect(run([{ $limit: 5 }, { $sort: { a: 1 } }], 'Tag').autoLimited).toBe(true);
  });

  it('honours a configured cap', () => {
    const r = validatePipeline('Tag', [], makePolicy(), { autoLimit: 7 });
    expect(r.pipeline).toEqual([{ $limit: 7 }]);
  });
});

describe('validatePipeline: shape and bounds', () => {
  it('refuses a non-array pipeline with an example', () => {
    expect(() => run({ $match: {} }, 'Tag')).toThrow(/must be an array of stages/);
  });

  it('refuses unknown stages, listing the supported ones', () => {
    expect(() => run([{ $collStats: {} }], 'Tag')).toThrow(
      /Unsupported pipeline stage '\$collStats'.*\$match/,
    );
  });

  it('refuses stages with two keys', () => {
    expect(() => run([{ $match: {}, $limit: 1 }], 'Tag')).toThrow(AgentValidationError);
  });

  it('caps the stage count across sub-pipelines', () => {
    const many = Array.from({ length: 30 }, () => ({ $skip: 0 }));
    expect(() => run([...many, { $facet: { a: many } }], 'Tag')).toThrow(/more than 50 stages/);
  });

  it('caps sub-pipeline nesting', () => {
    let p: unknown[] = [{ $limit: 1 }];
    for (let i = 0; i < 9; i++) p = [{ $facet: { a: p } }];
    expect(() => run(p, 'Tag')).toThrow(/nest deeper than 8/);
  });

  it('caps JSON nesting', () => {
    let expr: unknown = 1;
    for (let i = 0; i < 40; i++) expr = { $abs: expr };
    expect(() => run([{ $project: { x: expr } }], 'Tag')).toThrow(/deeper than 32/);
  });

  it('caps the pipeline size', () => {
    const big = Array.from({ length: 20000 }, (_, i) => `value-${i}`);
    expect(() => run([{ $match: { a: { $in: big } } }], 'Tag')).toThrow(/bytes; the limit is/);
  });

  it('refuses bad $limit / $skip / $sort values', () => {
    expect(() => run([{ $limit: 0 }], 'Tag')).toThrow(/\$limit/);
    expect(() => run([{ $limit: '5' }], 'Tag')).toThrow(/\$limit/);
    expect(() => run([{ $skip: -1 }], 'Tag')).toThrow(/\$skip/);
    expect(() => run([{ $sort: { a: 'up' } }], 'Tag')).toThrow(/1 or -1/);
  });

  it('refuses unsafe system variables', () => {
    expect(() => run([{ $project: { r: '$$USER_ROLES' } }], 'Tag')).toThrow(AgentValidationError);
    expect(() => run([{ $project: { r: '$$NOW' } }], 'Tag')).not.toThrow();
  });

  it('does not mutate the caller pipeline', () => {
    const input = [
      { $lookup: { from: 'Customer', localField: 'customer', foreignField: 'objectId', as: 'c' } },
    ];
    const copy = structuredClone(input);
    run(input);
    expect(input).toEqual(copy);
  });
});

describe('validatePipeline: the where cost caps hold in $match', () => {
  const or = (n: number) => ({ $or: Array.from({ length: n }, (_, i) => ({ status: `s${i}` })) });

  it('counts $or/$and/$nor clauses over every $match stage', () => {
    expect(() => run([{ $match: or(32) }])).not.toThrow();
    expect(() => run([{ $match: or(60) }])).toThrow(
      /\$match is too costly to run: more than 32 \$or\/\$and\/\$nor clauses/,
    );
    expect(() => run([{ $match: or(20) }, { $limit: 5 }, { $match: or(20) }])).toThrow(
      /more than 32/,
    );
  });

  it('bounds $in lists, the number of regexes and each regex', () => {
    const list = Array.from({ length: 501 }, (_, i) => `s${i}`);
    expect(() => run([{ $match: { status: { $in: list } } }])).toThrow(/more than 500 list/);
    const regexes = Array.from({ length: 9 }, (_, i) => ({ status: { $regex: `^s${i}` } }));
    expect(() => run([{ $match: { $and: regexes } }])).toThrow(/more than 8 \$regex/);
    expect(() => run([{ $match: { status: { $regex: '(a+)+$' } } }])).toThrow(SecurityBlockedError);
    expect(() => run([{ $match: { status: { $regex: 'x'.repeat(300) } } }])).toThrow(
      /longer than 256/,
    );
  });
});

describe('validatePipeline: column lineage (what pointer compaction relies on)', () => {
  const origin = (pipeline: unknown[], field: string, className = 'Tag') =>
    run(pipeline, className).columnOrigin(field);

  it('a column kept as it is, copied with "$column" or grouped on, keeps its origin', () => {
    expect(origin([{ $match: { a: 1 } }], 'owner')).toBe('owner');
    expect(origin([{ $project: { owner: 1 } }], 'owner')).toBe('owner');
    expect(origin([{ $project: { who: '$owner' } }], 'who')).toBe('owner');
    expect(origin([{ $addFields: { who: '$owner' } }], 'who')).toBe('owner');
    expect(origin([{ $group: { _id: '$owner', n: { $sum: 1 } } }], '_id')).toBe('owner');
    expect(origin([{ $group: { _id: null, last: { $last: '$owner' } } }], 'last')).toBe('owner');
    expect(origin([{ $project: { who: '$owner' } }, { $sort: { who: 1 } }], 'who')).toBe('owner');
  });

  it('anything computed, counted, unwound or overwritten has none', () => {
    expect(origin([{ $project: { who: { $concat: ['$owner', 'x'] } } }], 'who')).toBeUndefined();
    expect(origin([{ $group: { _id: '$owner', n: { $sum: 1 } } }], 'n')).toBeUndefined();
    expect(origin([{ $group: { _id: { o: '$owner' } } }], '_id')).toBeUndefined();
    expect(origin([{ $addFields: { owner: 'text' } }], 'owner')).toBeUndefined();
    expect(origin([{ $unwind: '$owner' }], 'owner')).toBeUndefined();
    expect(origin([{ $count: 'owner' }], 'owner')).toBeUndefined();
    expect(origin([{ $project: { owner: 1 } }], 'other')).toBeUndefined();
    expect(origin([{ $project: { who: '$$ROOT' } }], 'who')).toBeUndefined();
  });

  it('rows of another class in the stream ($unionWith) leave no column with an origin', () => {
    expect(origin([{ $unionWith: 'Note' }], 'owner')).toBeUndefined();
  });

  it('$addFields reads the incoming document: a swap does not chain origins', () => {
    const p = [{ $addFields: { a: '$b', b: '$a' } }];
    expect(origin(p, 'a')).toBe('b');
    expect(origin(p, 'b')).toBe('a');
  });
});
