import type { Where } from './constraint-translator';

export interface WhereLayers {
  caller?: Where;
  canonical?: Where;
  perClass?: Where;
  defaultFilter?: Where;
  tenant?: Where;
}

const isEmpty = (w?: Where) => !w || Object.keys(w).length === 0;

/**
 * ANDs the layers in a fixed order (caller, canonical, per-class, default, tenant) as one top-level
 * `$and`, so an auditor can read each layer at its position. A single layer is returned as is.
 */
export function composeWhere(layers: WhereLayers): Where {
  return andWhere(
    layers.caller,
    layers.canonical,
    layers.perClass,
    layers.defaultFilter,
    layers.tenant,
  );
}

/** ANDs constraints in order, dropping empty ones: `{}`, the one left as is, or a top-level `$and`. */
export function andWhere(...clauses: Array<Where | undefined>): Where {
  const parts = clauses.filter((w): w is Where => !isEmpty(w));
  if (parts.length === 0) return {};
  if (parts.length === 1) return parts[0];
  return { $and: parts };
}
