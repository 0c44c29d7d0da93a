import { AccessDeniedError, AgentUnauthorizedError, ParseAgentConfigError } from '../core/errors';
import { suppressSecurityBanners } from '../core/security-banner';
import type { DataPathProvider } from '../ports/data-path';
import {
  createAgentServices,
  type StandaloneAgentServices,
} from '../composition/create-agent-services';
import { ParseAgent, type AgentOptions } from './parse-agent';

/**
 * Sub-agents built without a server: every rule here is checked at construction, before any
 * data is read. The direct path below only answers "yes, I can serve ACL scopes" so aclUser and
 * aclRole agents can be built; nothing ever binds it.
 */
const directPathStandIn: DataPathProvider = {
  kind: 'direct-stand-in',
  refusal: () => undefined,
  bind: () => {
    throw new Error('construction must not bind a data path');
  },
};

describe('sub-agents only narrow', () => {
  let standalone: StandaloneAgentServices;
  const warnings: string[] = [];
  const agent = (options: AgentOptions = {}) => new ParseAgent(options, standalone.services);

  beforeAll(() => {
    suppressSecurityBanners();
    standalone = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'unused' },
      dataPaths: [directPathStandIn],
      warn: (message) => warnings.push(message),
    });
  });
  afterAll(() => standalone.close());

  describe('identity', () => {
    it('inherits the parent identity when the child names none', () => {
      expect(agent({ aclRole: 'staff' }).subAgent()).toMatchObject({
        aclRole: 'staff',
        authType: 'acl_role',
        usingMasterKey: false,
      });
      expect(agent({ aclUser: { objectId: 'u_alice' } }).subAgent()).toMatchObject({
        aclUser: 'u_alice',
        authType: 'acl_user',
      });
      expect(agent({ sessionToken: 'r:alice' }).subAgent()).toMatchObject({
        sessionToken: 'r:alice',
        authType: 'session_token',
      });
      // Empty values are not "unset": they are refused, never inherited or read as the master key.
      expect(() => agent({ aclRole: 'staff' }).subAgent({ sessionToken: '', aclRole: '' })).toThrow(
        AgentUnauthorizedError,
      );
    });

    it('lets a child restate its parent identity', () => {
      expect(agent({ aclRole: 'staff' }).subAgent({ aclRole: 'staff' }).aclRole).toBe('staff');
      expect(
        agent({ aclUser: 'u_alice' }).subAgent({ aclUser: { objectId: 'u_alice' } }).aclUser,
      ).toBe('u_alice');
      expect(
        agent({ sessionToken: 'r:alice' }).subAgent({ sessionToken: 'r:alice' }).sessionToken,
      ).toBe('r:alice');
    });

    it('refuses an aclRole parent handing down another role, a user or a session', () => {
      const staff = agent({ aclRole: 'staff' });
      for (const child of [
        { aclRole: 'admin' },
        { aclRole: 'Staff' },
        { aclUser: 'u_root' },
        { aclUser: { objectId: 'u_root' } },
        { sessionToken: 'r:someone-else' },
      ]) {
        expect(() => staff.subAgent(child)).toThrow(AccessDeniedError);
      }
      expect(() => staff.subAgent({ aclRole: 'admin' })).toThrow(
        /parent's identity \(aclRole 'staff'\) and cannot switch to aclRole 'admin'.*Omit sessionToken, aclUser and aclRole.*master-key agent/,
      );
    });

    it('refuses an aclUser parent handing down another user, a role or a session', () => {
      const alice = agent({ aclUser: 'u_alice' });
      for (const child of [
        { aclUser: 'u_bob' },
        { aclUser: { objectId: 'u_bob' } },
        { aclRole: 'admin' },
        { sessionToken: 'r:bob' },
      ]) {
        expect(() => alice.subAgent(child)).toThrow(AccessDeniedError);
      }
      expect(() => alice.subAgent({ aclRole: 'admin' })).toThrow(
        /aclUser 'u_alice'\) and cannot switch to aclRole 'admin'/,
      );
    });

    it('refuses a session parent handing down another session or an ACL scope, without echoing tokens', () => {
      const alice = agent({ sessionToken: 'r:alice-secret' });
      for (const child of [
        { sessionToken: 'r:bob-secret' },
        { aclUser: 'u_root' },
        { aclRole: 'admin' },
      ]) {
        let error: unknown;
        try {
          alice.subAgent(child);
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(AccessDeniedError);
        expect((error as Error).message).not.toMatch(/alice-secret|bob-secret/);
      }
      expect(() => alice.subAgent({ sessionToken: 'r:bob-secret' })).toThrow(
        /cannot switch to another session token/,
      );
    });

    it('refuses a scoped child that would resolve to the master key', () => {
      // An aclUser object without an id must not silently become a master-key agent.
      expect(() => agent({ aclRole: 'staff' }).subAgent({ aclUser: { objectId: '' } })).toThrow(
        AgentUnauthorizedError,
      );
      expect(() => agent({ aclUser: { objectId: undefined as never } })).toThrow(
        /aclUser\.objectId is null/,
      );
      expect(() => agent({ aclRole: 42 as never })).toThrow(/aclRole is not a string \(number\)/);
    });

    it('lets a master-key parent narrow to any identity', () => {
      const operator = agent({ permissions: 'write' });
      expect(operator.subAgent({ aclRole: 'staff' }).authType).toBe('acl_role');
      expect(operator.subAgent({ aclUser: 'u_alice' }).authType).toBe('acl_user');
      expect(operator.subAgent({ sessionToken: 'r:alice' }).authType).toBe('session_token');
      expect(operator.subAgent().authType).toBe('master_key');
      // ...and the narrowed child is then held to its own identity.
      expect(() => operator.subAgent({ aclRole: 'staff' }).subAgent({ aclRole: 'admin' })).toThrow(
        AccessDeniedError,
      );
    });
  });

  describe('surface', () => {
    it('keeps the parent tools filter when the child names none, and intersects when it does', () => {
      const parent = agent({ tools: ['query_class', 'count_objects'] });
      expect(parent.subAgent().allowedTools().sort()).toEqual(['count_objects', 'query_class']);
      expect(parent.subAgent({ tools: ['count_objects', 'get_schema'] }).allowedTools()).toEqual([
        'count_objects',
      ]);
      expect(parent.subAgent({ tools: { except: ['query_class'] } }).allowedTools()).toEqual([
        'count_objects',
      ]);
      expect(() => parent.subAgent({ tools: ['get_schema'] })).toThrow(
        /sub-agent tools filter shares nothing with its parent's/,
      );
      const excluding = agent({ tools: { except: ['query_class'] } });
      expect(
        excluding.subAgent({ tools: ['query_class', 'count_objects'] }).allowedTools(),
      ).toEqual(['count_objects']);
    });

    it('keeps the parent methods filter as well as its own', () => {
      const parent = agent({ methods: ['refund'] });
      expect(parent.subAgent().methodPermitted('Order', 'refund')).toBe(true);
      expect(parent.subAgent().methodPermitted('Order', 'cancel')).toBe(false);
      const qualified = parent.subAgent({ methods: ['Order.refund', 'Order.cancel'] });
      expect(qualified.methodPermitted('Order', 'refund')).toBe(true);
      expect(qualified.methodPermitted('Order', 'cancel')).toBe(false);
      expect(qualified.methodPermitted('Invoice', 'refund')).toBe(false);
      expect(qualified.subAgent().methodPermitted('Order', 'cancel')).toBe(false);
    });

    it('keeps permissions, classes, tenant and per-class filters at most the parent', () => {
      const parent = agent({
        aclRole: 'staff',
        permissions: 'write',
        tenantId: 'acme',
        classes: ['Order', 'Tenant'],
        filters: { Order: { status: 'paid' } },
      });
      expect(() => parent.subAgent({ permissions: 'admin' })).toThrow(/more permissions/);
      expect(() => parent.subAgent({ tenantId: 'globex' })).toThrow(/tenant/);
      expect(() => parent.subAgent({ classes: ['Customer'] })).toThrow(/classes filter/);
      const child = parent.subAgent({ filters: { Order: { total: { $gt: 5 } } } });
      expect(child.tenantId).toBe('acme');
      expect(child.permissions).toBe('readonly');
      expect(child.filterFor('Order')).toEqual({
        $and: [{ status: 'paid' }, { total: { $gt: 5 } }],
      });
    });

    it('cannot drop confirmation, turn on debug disclosure or allow mutations its parent lacks', () => {
      const parent = agent({ sessionToken: 'r:alice', permissions: 'admin' });
      expect(() => parent.subAgent({ confirmationRequired: false })).toThrow(
        /confirmationRequired/,
      );
      expect(() => parent.subAgent({ agentDebug: true })).toThrow(/agentDebug/);
      expect(() => parent.subAgent({ allowMutations: true })).toThrow(/allowMutations/);
      const relaxed = agent({ confirmationRequired: false, agentDebug: true });
      expect(relaxed.subAgent({ confirmationRequired: true }).confirmationRequired).toBe(true);
      expect(relaxed.subAgent({ agentDebug: false }).agentDebug).toBe(false);
    });

    it('ignores a recursionDepth on a sub-agent, and says so', () => {
      warnings.length = 0;
      const child = agent({ recursionDepth: 2 }).subAgent({ recursionDepth: 10 });
      expect(child.recursionDepth).toBe(1);
      expect(warnings.join('\n')).toMatch(/recursionDepth is ignored for a sub-agent/);
    });
  });

  describe('classes filter names', () => {
    it('warns once about an unregistered class in only, and refuses it when strict', () => {
      warnings.length = 0;
      const parent = agent({ classes: { only: ['Ghost', '_User'], except: ['NotYetThere'] } });
      expect(warnings.filter((w) => /unregistered class/.test(w))).toEqual([
        expect.stringContaining('Ghost'),
      ]);
      // Built-in classes and except names are never flagged.
      expect(warnings.join('\n')).not.toMatch(/_User|NotYetThere/);
      // A sub-agent inheriting the filter does not repeat its parent's warning.
      warnings.length = 0;
      parent.subAgent();
      expect(warnings.join('\n')).not.toMatch(/unregistered class/);
      expect(() => agent({ classes: ['Ghost'], strictClassFilter: true })).toThrow(
        ParseAgentConfigError,
      );
    });
  });
});
