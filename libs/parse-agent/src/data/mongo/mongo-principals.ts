import type { MongoDatabaseLike } from './mongo-driver';

/** Who a scoped identity reads as: `*`, the user id (if any) and every `role:` name it holds. */
export interface Principals {
  userId?: string;
  /** `['*', userId?, 'role:a', 'role:b', ...]`: the strings `_rperm` and CLP entries are matched against. */
  names: string[];
}

/** How deep role inheritance is followed (Parse roles nest through the `roles` relation). */
const MAX_ROLE_DEPTH = 20;

/**
 * Expands users and roles into principals from Parse's own tables: `_Join:users:_Role` (a role's
 * users) and `_Join:roles:_Role` (a role's child roles, whose members inherit the parent). Results
 * are cached per identity for `ttlMs`; `invalidate()` drops them when roles change.
 */
export class MongoPrincipalResolver {
  protected readonly cached = new Map<string, { at: number; value: Promise<Principals> }>();

  constructor(
    protected readonly db: () => Promise<MongoDatabaseLike>,
    protected readonly collectionName: (className: string) => string,
    protected readonly ttlMs = 60_000,
    protected readonly now: () => number = () => Date.now(),
  ) {}

  forUser(userId: string): Promise<Principals> {
    return this.memo(`user:${userId}`, async () => {
      const db = await this.db();
      const direct = await db
        .collection(this.collectionName('_Join:users:_Role'))
        .find({ relatedId: userId })
        .toArray();
      const roles = await this.roleNames(direct.map((d) => String(d.owningId)));
      return { userId, names: ['*', userId, ...roles] };
    });
  }

  forRole(roleName: string): Promise<Principals> {
    return this.memo(`role:${roleName}`, async () => {
      const db = await this.db();
      const found = await db
        .collection(this.collectionName('_Role'))
        .find({ name: roleName }, { projection: { _id: 1 } })
        .toArray();
      // An unknown role still reads as itself: rows shared with `role:<name>` stay visible to it.
      const inherited = await this.roleNames(found.map((d) => String(d._id)));
      return { names: [...new Set(['*', `role:${roleName}`, ...inherited])] };
    });
  }

  /** Drops cached principals: all of them, or one user's / one role's. */
  invalidate(key?: { userId?: string; role?: string }): void {
    if (!key) this.cached.clear();
    if (key?.userId) this.cached.delete(`user:${key.userId}`);
    if (key?.role) this.cached.delete(`role:${key.role}`);
  }

  /** The names of the given roles and of every role they inherit from, as `role:<name>`. */
  protected async roleNames(roleIds: string[]): Promise<string[]> {
    const db = await this.db();
    const seen = new Set(roleIds);
    let frontier = roleIds;
    for (let depth = 0; frontier.length && depth < MAX_ROLE_DEPTH; depth++) {
      // A parent role lists its child roles in `roles`: members of the child inherit the parent.
      const parents = await db
        .collection(this.collectionName('_Join:roles:_Role'))
        .find({ relatedId: { $in: frontier } })
        .toArray();
      frontier = parents.map((p) => String(p.owningId)).filter((id) => !seen.has(id));
      for (const id of frontier) seen.add(id);
    }
    if (!seen.size) return [];
    const roles = await db
      .collection(this.collectionName('_Role'))
      .find({ _id: { $in: [...seen] } }, { projection: { name: 1 } })
      .toArray();
    return roles
      .map((r) => r.name)
      .filter((n): n is string => typeof n === 'string')
      .map((n) => `role:${n}`)
      .sort();
  }

  protected memo(key: string, load: () => Promise<Principals>): Promise<Principals> {
    const hit = this.cached.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.value;
    const value = load();
    this.cached.set(key, { at: this.now(), value });
    // A failed lookup is not remembered.
    value.catch(() => this.cached.delete(key));
    return value;
  }
}
