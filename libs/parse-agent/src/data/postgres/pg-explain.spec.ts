import { summarizePlan } from './pg-explain';

const plan = (root: Record<string, unknown>) => [{ Plan: root }];

describe('summarizePlan', () => {
  it('a sequential scan of a large table is a collection scan; of a small one it is not', () => {
    const p = plan({
      'Node Type': 'Limit',
      'Total Cost': 10,
      Plans: [
        { 'Node Type': 'Seq Scan', 'Relation Name': 'Order', 'Plan Rows': 5, Filter: '(secret)' },
      ],
    });
    const large = summarizePlan('Order', p, { rows: 100_000, bytes: 1e7 });
    expect(large.collectionScan).toBe(true);
    expect(large.winningPlan).toBe('Seq Scan');
    expect(summarizePlan('Order', p, { rows: 10, bytes: 8192 }).collectionScan).toBe(false);
    // Before ANALYZE (rows -1) the size on disk decides.
    expect(summarizePlan('Order', p, { rows: -1, bytes: 5e6 }).collectionScan).toBe(true);
    // Filter text (principals, scope values) never reaches the summary.
    expect(JSON.stringify(large)).not.toContain('secret');
  });
  it('reports index scans and their indexes', () => {
    const p = plan({
      'Node Type': 'Index Scan',
      'Relation Name': 'Order',
      'Index Name': 'Order_pkey',
      'Index Cond': '("objectId" = $1)',
    });
    const s = summarizePlan('Order', p, { rows: 1e6, bytes: 1e9 });
    expect(s).toMatchObject({
      winningPlan: 'Index Scan',
      collectionScan: false,
      indexesUsed: ['Order_pkey'],
    });
  });
  it.each(['Index Scan', 'Index Only Scan', 'Parallel Index Scan'])(
    'a %s with no index condition walks the whole index: a collection scan on a large table',
    (type) => {
      // What the planner picks for `WHERE color = $1 ORDER BY "objectId" LIMIT 100` when walking
      // the primary key in order looks cheaper than sorting: every row is read and filtered.
      const p = plan({
        'Node Type': 'Limit',
        Plans: [
          {
            'Node Type': type,
            'Relation Name': 'Order',
            'Index Name': 'Order_pkey',
            Filter: '(color = $1)',
          },
        ],
      });
      const large = summarizePlan('Order', p, { rows: 100_000, bytes: 1e7 });
      expect(large).toMatchObject({
        winningPlan: 'Full Index Scan',
        collectionScan: true,
        indexesUsed: ['Order_pkey'],
      });
      expect(large.details).toMatchObject({ full_index_scan: true, sequential_scan: false });
      expect(summarizePlan('Order', p, { rows: 10, bytes: 8192 }).collectionScan).toBe(false);
      // Another relation's full index walk (a joined class) is not this class's scan.
      expect(summarizePlan('Customer', p, { rows: 1e5, bytes: 1e7 }).collectionScan).toBe(false);
    },
  );
});
