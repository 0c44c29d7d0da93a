import type { ExplainSummary } from '../../ports/data-path';
import type { MongoDoc } from './mongo-driver';

/**
 * Summarises MongoDB explain output (find or aggregate, any server version's layout): the winning
 * plan's stages, whether any of them scans a whole collection, and the indexes it uses.
 */
export function summarizeExplain(explain: MongoDoc): ExplainSummary {
  const plans: MongoDoc[] = [];
  const findPlans = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(findPlans);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value as MongoDoc)) {
        if (key === 'winningPlan' && typeof inner === 'object' && inner !== null)
          plans.push(inner as MongoDoc);
        else if (key !== 'rejectedPlans') findPlans(inner);
      }
    }
  };
  findPlans(explain);
  const stages: string[] = [];
  const indexes = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const n = node as MongoDoc;
    if (typeof n.stage === 'string') stages.push(n.stage);
    if (typeof n.indexName === 'string') indexes.add(n.indexName);
    for (const key of ['inputStage', 'inputStages', 'queryPlan', 'thenStage', 'elseStage']) {
      if (key in n) walk(n[key]);
    }
  };
  plans.forEach(walk);
  const collectionScan = stages.includes('COLLSCAN');
  return {
    winningPlan: collectionScan
      ? 'COLLSCAN'
      : stages.includes('IXSCAN')
        ? 'IXSCAN'
        : (stages[0] ?? 'UNKNOWN'),
    collectionScan,
    indexesUsed: [...indexes],
    details: { stages, plans },
  };
}
