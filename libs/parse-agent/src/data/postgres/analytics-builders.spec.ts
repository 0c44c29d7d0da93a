import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import { countSql } from './count-sql';
import { distinctSql } from './distinct-sql';
import { groupByDateSql } from './group-by-date-sql';
import { groupBySql } from './group-by-sql';
import type { SqlContext } from './scoped-source';
import { selectSql } from './select-sql';

const ctx: SqlContext = {
  schemas: {
    Order: {
      className: 'Order',
      fields: {
        status: { type: 'String' },
        amount: { type: 'Number' },
        customer: { type: 'Pointer', targetClass: 'Customer' },
        tags: { type: 'Array' },
        place: { type: 'GeoPoint' },
        secret: { type: 'String' },
      },
    },
  },
  scopeFor: () => ({ principals: ['u1', 'role:staff'] }),
  columnsFor: () => ['objectId', 'createdAt', 'status', 'amount', 'customer', 'tags', 'place'],
};

const ACL = /\(b1\."_rperm" IS NULL OR b1\."_rperm" && \$1::text\[\]\)/;

describe('count, group_by, group_by_date, distinct and select builders', () => {
  it('count wraps the scoped source and returns a real count', () => {
    const q = countSql({ className: 'Order', where: { status: 'paid' } }, ctx);
    expect(q.text).toMatch(ACL);
    expect(q.text).toMatch(/^SELECT count\(\*\)::float8 AS "count" FROM \(SELECT b1\."objectId", /);
    expect(q.values).toEqual([['*', 'u1', 'role:staff'], 'paid']);
  });

  it('group_by sums a number field, largest first, bound limit, pointer keys described', () => {
    const q = groupBySql(
      { className: 'Order', field: 'customer', accumulator: 'sum', valueField: 'amount', limit: 7 },
      ctx,
    );
    expect(q.text).toContain('COALESCE(sum(t2."amount"), 0)::float8 AS "value"');
    expect(q.text).toContain('GROUP BY t2."customer" ORDER BY "value" DESC NULLS LAST');
    expect(q.text).toMatch(/LIMIT \$2$/);
    expect(q.values[1]).toBe(7);
    expect(q.key).toEqual({ field: 'customer', type: 'Pointer', targetClass: 'Customer' });
    expect(() =>
      groupBySql(
        { className: 'Order', field: 'status', accumulator: 'sum', valueField: 'status' },
        ctx,
      ),
    ).toThrow(AgentValidationError);
    expect(() => groupBySql({ className: 'Order', field: 'place' }, ctx)).toThrow(/not groupable/);
    expect(() => groupBySql({ className: 'Order', field: 'secret' }, ctx)).toThrow(
      AccessDeniedError,
    );
    expect(() => groupBySql({ className: 'Order', field: 'status', limit: -1 }, ctx)).toThrow(
      /limit/,
    );
  });

  it('refuses a protected field and a missing one alike, naming no other column', () => {
    const messages = ['secret', 'nosuch'].map((field) => {
      try {
        distinctSql({ className: 'Order', field }, ctx);
      } catch (error) {
        expect(error).toBeInstanceOf(AccessDeniedError);
        return (error as Error).message.replace(field, 'F');
      }
      throw new Error(`distinct on ${field} was not refused`);
    });
    expect(messages[0]).toBe(messages[1]);
    expect(messages[0]).not.toMatch(/protected|status|amount/);
    expect(messages[0]).toContain('get_schema lists the fields you can use');
  });

  it('group_by_date truncates in the bound time zone with a fixed unit literal', () => {
    const q = groupByDateSql(
      { className: 'Order', interval: 'week', timeZone: 'Asia/Kolkata' },
      ctx,
    );
    expect(q.text).toContain(`date_trunc('week', t2."createdAt" AT TIME ZONE $2::text)`);
    expect(q.values).toContain('Asia/Kolkata');
    expect(() => groupByDateSql({ className: 'Order', interval: 'decade' as never }, ctx)).toThrow(
      /Unknown interval/,
    );
    expect(() =>
      groupByDateSql({ className: 'Order', interval: 'day', timeZone: "UTC'; --" }, ctx),
    ).toThrow(/Unknown time zone/);
    expect(() =>
      groupByDateSql({ className: 'Order', interval: 'day', field: 'status' }, ctx),
    ).toThrow(/needs a Date field/);
  });

  it('distinct unwinds arrays and skips missing values', () => {
    expect(distinctSql({ className: 'Order', field: 'tags' }, ctx).text).toContain(
      'jsonb_array_elements(',
    );
    expect(distinctSql({ className: 'Order', field: 'status' }, ctx).text).toContain(
      'IS NOT NULL ORDER BY 1',
    );
  });

  it('select lists requested visible columns with a stable order and bound paging', () => {
    const q = selectSql(
      {
        className: 'Order',
        columns: ['status', 'amount'],
        order: '-amount,status',
        limit: 10,
        offset: 20,
      },
      ctx,
    );
    expect(q.text).toMatch(/^SELECT t2\."status", t2\."amount" FROM \(/);
    expect(q.text).toContain(
      'ORDER BY t2."amount" DESC NULLS LAST, t2."status" ASC NULLS FIRST, t2."objectId" ASC',
    );
    expect(q.text).toMatch(/LIMIT \$2 OFFSET \$3$/);
    expect(q.values.slice(1)).toEqual([10, 20]);
    expect(selectSql({ className: 'Order', limit: 1 }, ctx).text).not.toContain('secret');
    expect(() => selectSql({ className: 'Order', columns: ['secret'], limit: 1 }, ctx)).toThrow(
      AccessDeniedError,
    );
    expect(() => selectSql({ className: 'Nope', limit: 1 }, ctx)).toThrow(/Unknown class/);
  });
});
