import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import { SqlParams, type SqlQuery } from './sql-params';
import { scopedSource, visibleField, type SqlContext } from './scoped-source';
import { compileWhere, type Where } from './where-to-sql';

export interface SelectInput {
  className: string;
  /** Default: every visible column. */
  columns?: readonly string[];
  where?: Where;
  /** Parse style: `'-createdAt,name'` or `['-createdAt', 'name']`. */
  order?: string | readonly string[];
  limit: number;
  offset?: number;
}

const UNSORTABLE = new Set(['GeoPoint', 'Polygon']);

/** Rows for `export_data`: visible columns only, in a stable order (objectId breaks ties). */
export function selectSql(input: SelectInput, ctx: SqlContext): SqlQuery {
  const params = new SqlParams();
  const source = scopedSource(input.className, ctx, params);
  const t = params.alias();
  const names = input.columns ?? Object.keys(source.fields);
  if (names.length === 0) throw new AgentValidationError('Select at least one column.');
  const columns = names.map((name) => {
    visibleField(source, name, 'column');
    return columnRef(name, t);
  });
  const cond = compileWhere(input.where ?? {}, source, params, t);
  const keys = typeof input.order === 'string' ? input.order.split(',') : (input.order ?? []);
  const order: string[] = [];
  for (const raw of keys) {
    const key = raw.trim();
    if (!key) continue;
    const desc = key.startsWith('-');
    const name = desc ? key.slice(1) : key;
    const field = visibleField(source, name, 'order');
    if (UNSORTABLE.has(field.type)) {
      throw new AgentValidationError(
        `Cannot order by '${name}': ${field.type} fields are not sortable.`,
      );
    }
    order.push(`${columnRef(name, t)} ${desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`);
  }
  if (source.fields.objectId) order.push(`${columnRef('objectId', t)} ASC`);
  const limit = params.addCount(input.limit, 'limit', { min: 1 });
  const offset = params.addCount(input.offset ?? 0, 'offset');
  return params.query(
    `SELECT ${columns.join(', ')} FROM (${source.sql}) AS ${t} WHERE ${cond}` +
      (order.length ? ` ORDER BY ${order.join(', ')}` : '') +
      ` LIMIT ${limit} OFFSET ${offset}`,
  );
}
