import 'reflect-metadata';
import { toCamelCase, toSnakeCase } from '../query/field-names';
import { columnFor, renameWhereFields, resolveDeclaredNames } from './declared-names';
import { AgentCanonicalFilter } from './decorators/agent-canonical-filter.decorator';
import {
  AgentField,
  AgentFields,
  AgentJoinFields,
  AgentLargeFields,
} from './decorators/agent-fields.decorators';
import { AgentTenantScope } from './decorators/agent-tenant-scope.decorator';
import { ParseClass } from './decorators/parse-class.decorator';
import { BelongsTo } from './decorators/relation.decorators';
import { MetadataRegistry } from './metadata-registry';

@ParseClass('Team')
class Team {}

@ParseClass('Account')
@AgentTenantScope('org')
@AgentFields('org', 'display_name', 'owner', 'notes', 'ghost')
@AgentJoinFields('display_name')
@AgentLargeFields('notes')
@AgentCanonicalFilter({ $or: [{ is_archived: false }, { org: { $exists: false } }] })
class Account {
  @AgentField({ field: 'org_ref' })
  org?: string;

  @BelongsTo(() => Team, { field: 'team_ref' })
  owner?: unknown;
}

const registry = new MetadataRegistry().register(Account, Team);

describe('the registry maps declared properties to their columns', () => {
  it('in the allowlist, join and large fields, tenant scope and canonical filter', () => {
    const meta = registry.get('Account')!;
    expect(meta.fields).toEqual([
      'objectId',
      'createdAt',
      'updatedAt',
      'org_ref',
      'display_name',
      'team_ref',
      'notes',
      'ghost',
    ]);
    expect(meta.tenantScope?.field).toBe('org_ref');
    expect(meta.canonicalFilter).toEqual({
      $or: [{ is_archived: false }, { org_ref: { $exists: false } }],
    });
    expect(meta.references).toEqual({ team_ref: 'Team' });
  });
});

describe('resolveDeclaredNames', () => {
  const columns = [
    'objectId',
    'createdAt',
    'updatedAt',
    'ACL',
    'org_ref',
    'displayName',
    'team_ref',
    'notes',
    'isArchived',
  ];
  const resolved = resolveDeclaredNames(registry.get('Account')!, columns);

  it('reads a name as the one column spelled the other way', () => {
    expect(resolved.meta.fields).toContain('displayName');
    expect(resolved.meta.joinFields).toEqual(['displayName']);
    expect(resolved.mapped).toEqual({ display_name: 'displayName', is_archived: 'isArchived' });
    expect(resolved.meta.canonicalFilter).toEqual({
      $or: [{ isArchived: false }, { org_ref: { $exists: false } }],
    });
  });

  it('leaves names that match no column out of the lists and reports each once', () => {
    expect(resolved.meta.fields).not.toContain('ghost');
    expect(resolved.unresolved).toEqual([{ name: 'ghost', declaredIn: '@AgentFields' }]);
  });

  it('keeps a lazily resolved pointer target', () => {
    expect(resolved.meta.references).toEqual({ team_ref: 'Team' });
  });

  it('reports a tenant field and a canonical filter field that match no column', () => {
    const bare = resolveDeclaredNames(registry.get('Account')!, ['title']);
    expect(bare.unresolved).toEqual(
      expect.arrayContaining([
        { name: 'org_ref', declaredIn: '@AgentTenantScope' },
        { name: 'is_archived', declaredIn: '@AgentCanonicalFilter' },
        { name: 'team_ref', declaredIn: '@BelongsTo' },
      ]),
    );
    // The unresolved tenant field is kept as declared (the policy refuses reads resting on it).
    expect(bare.meta.tenantScope?.field).toBe('org_ref');
  });
});

describe('columnFor', () => {
  it('prefers the exact column, then the one other spelling, and names several', () => {
    expect(columnFor('sold_at', new Set(['sold_at', 'soldAt']))).toEqual({ column: 'sold_at' });
    expect(columnFor('sold_at', new Set(['soldAt']))).toEqual({ column: 'soldAt' });
    expect(columnFor('soldAt', new Set(['sold_at']))).toEqual({ column: 'sold_at' });
    expect(columnFor('sold_at', new Set(['soldAt', 'SoldAt']))).toEqual({
      candidates: ['SoldAt', 'soldAt'],
    });
    expect(columnFor('sold', new Set(['soldAt']))).toEqual({});
    expect(columnFor('objectId', new Set())).toEqual({ column: 'objectId' });
  });

  it('maps every snake_case spelling of a camelCase column back to it (generated names)', () => {
    const words = ['order', 'total', 'at', 'v2', 'x', 'created', 'by', 'id'];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 300; i++) {
      const parts = Array.from({ length: 1 + (next() % 3) }, () => words[next() % words.length]);
      const camel = toCamelCase(parts.join('_'));
      const columns = new Set([camel, 'unrelated', 'other_field']);
      expect(columnFor(toSnakeCase(camel), columns).column).toBe(camel);
      expect(columnFor(camel, columns).column).toBe(camel);
    }
  });
});

describe('renameWhereFields', () => {
  it('renames top names through logical operators and keeps dotted paths and operators', () => {
    const where = { a: 1, 'b.c': 2, $or: [{ a: { $gt: 1 } }, { d: 3 }], $relatedTo: { key: 'x' } };
    const upper = (n: string) => (n === 'a' || n === 'b' ? n.toUpperCase() : undefined);
    expect(renameWhereFields(where, upper)).toEqual({
      A: 1,
      'B.c': 2,
      $or: [{ A: { $gt: 1 } }, { d: 3 }],
      $relatedTo: { key: 'x' },
    });
  });
});
