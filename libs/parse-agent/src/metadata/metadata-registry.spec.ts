import 'reflect-metadata';
import { ParseAgentConfigError } from '../core/errors';
import { resetSecurityBanners, suppressSecurityBanners } from '../core/security-banner';
import { AgentField, AgentFields } from './decorators/agent-fields.decorators';
import { AgentHidden } from './decorators/agent-hidden.decorator';
import { AgentVisible, ParseClass } from './decorators/parse-class.decorator';
import { BelongsTo, HasMany } from './decorators/relation.decorators';
import { MetadataRegistry } from './metadata-registry';

describe('MetadataRegistry', () => {
  let banners: string[];

  beforeEach(() => {
    banners = [];
    resetSecurityBanners((line) => banners.push(line));
  });

  afterAll(() => resetSecurityBanners());

  describe('class names', () => {
    it('maps a model to its @ParseClass name, or to its own name without one', () => {
      @ParseClass('_User')
      class AppUser {}
      class Order {}
      const registry = new MetadataRegistry().register(AppUser, Order);
      expect(registry.get('_User')).toMatchObject({ className: '_User', modelName: 'AppUser' });
      expect(registry.get('_User')?.model).toBe(AppUser);
      expect(registry.get('Order')?.modelName).toBe('Order');
      expect(registry.all().map((m) => m.className)).toEqual(['_User', 'Order']);
    });

    it('resolves a class name from a name, a registered model or an unregistered one', () => {
      @ParseClass('_Role')
      class AppRole {}
      @ParseClass('Shipment')
      class ShipmentModel {}
      class Plain {}
      const registry = new MetadataRegistry().register(AppRole);
      expect(registry.resolveClassName('Anything')).toBe('Anything');
      expect(registry.resolveClassName(AppRole)).toBe('_Role');
      expect(registry.resolveClassName(ShipmentModel)).toBe('Shipment');
      expect(registry.resolveClassName(Plain)).toBe('Plain');
    });

    it('lists name variants: Parse name, without the leading underscore, and the model name', () => {
      @ParseClass('_User')
      class AppUser {}
      const registry = new MetadataRegistry().register(AppUser);
      expect(registry.nameVariants('_User')).toEqual(['_User', 'User', 'AppUser']);
      expect(registry.nameVariants('Order')).toEqual(['Order']);
    });

    it('refuses a model whose name is not a valid Parse class name, saying how to fix it', () => {
      class Bad$Model {}
      expect(() => new MetadataRegistry().register(Bad$Model)).toThrow(
        new ParseAgentConfigError(
          "Model Bad$Model maps to an invalid Parse class name 'Bad$Model'; set one with @ParseClass('Name').",
        ),
      );
    });

    it('refuses something that is not a class', () => {
      expect(() => new MetadataRegistry().register('Order' as never)).toThrow(
        'Cannot register Order as a model: pass the decorated class itself.',
      );
    });

    it('refuses two models declaring the same Parse class, and registers neither twice', () => {
      @ParseClass('Order')
      class OrderV1 {}
      @ParseClass('Order')
      class OrderV2 {}
      const registry = new MetadataRegistry().register(OrderV1);
      expect(() => registry.register(OrderV2)).toThrow(
        new ParseAgentConfigError(
          "Parse class 'Order' is declared by both OrderV1 and OrderV2; keep one model per class.",
        ),
      );
      expect(registry.get('Order')?.model).toBe(OrderV1);
    });

    it('treats registering the same model again as a no-op', () => {
      class Order {}
      const registry = new MetadataRegistry().register(Order);
      const first = registry.get('Order');
      expect(() => registry.register(Order, Order)).not.toThrow();
      expect(registry.get('Order')).toBe(first);
      expect(registry.all()).toHaveLength(1);
    });
  });

  describe('fields', () => {
    it('maps properties to wire names through @AgentField({ field })', () => {
      class Order {
        @AgentField({ field: 'order_status' })
        status?: string;
        @AgentField({ description: 'Total in cents' })
        total?: number;
      }
      const meta = new MetadataRegistry().register(Order).get('Order')!;
      expect(meta.propertyToWire).toEqual({ status: 'order_status', total: 'total' });
      expect(Object.keys(meta.fieldDocs).sort()).toEqual(['order_status', 'total']);
      expect(meta.fieldDocs.total.description).toBe('Total in cents');
    });

    it('always includes objectId, createdAt and updatedAt in an allowlist', () => {
      @AgentFields('title', 'status')
      class Order {}
      expect(new MetadataRegistry().register(Order).get('Order')!.fields).toEqual([
        'objectId',
        'createdAt',
        'updatedAt',
        'title',
        'status',
      ]);
    });

    it('does not duplicate the always-kept fields when they are declared', () => {
      @AgentFields('objectId', 'title')
      class Order {}
      expect(new MetadataRegistry().register(Order).get('Order')!.fields).toEqual([
        'objectId',
        'createdAt',
        'updatedAt',
        'title',
      ]);
    });
  });

  describe('hidden classes', () => {
    it.each(['_Session', '_Product', '_JobStatus', '_JobSchedule'])(
      'hides the built-in class %s from every agent, master key included',
      (name) => {
        const registry = new MetadataRegistry();
        expect(registry.isHidden(name)).toBe(true);
        expect(registry.isHidden(name, true)).toBe(true);
        expect(registry.hiddenClassNames()).toContain(name);
      },
    );

    it('does not hide ordinary classes or _User/_Role when unregistered classes are visible', () => {
      const registry = new MetadataRegistry({ unregisteredClasses: 'visible' });
      for (const name of ['Order', '_User', '_Role']) {
        expect(registry.isHidden(name)).toBe(false);
      }
      expect(registry.isHidden('_Installation')).toBe(true);
    });

    it('hides classes no model declares by default, for the master key too', () => {
      @ParseClass('Order')
      class OrderModel {}
      const registry = new MetadataRegistry().register(OrderModel);
      expect(registry.isHidden('Order')).toBe(false);
      expect(registry.isHidden('ApiCredential')).toBe(true);
      expect(registry.isHidden('ApiCredential', true)).toBe(true);
      expect(registry.isUnregisteredHidden('ApiCredential')).toBe(true);
      // An explicit unhide opens one unregistered class.
      expect(registry.unhide('ApiCredential')).toBe(true);
      expect(registry.isHidden('ApiCredential')).toBe(false);
      expect(registry.isHidden('Ledger')).toBe(true);
    });

    it('refuses an unknown unregisteredClasses value with the accepted ones', () => {
      expect(
        () => new MetadataRegistry({ unregisteredClasses: 'open' as unknown as 'hidden' }),
      ).toThrow(/'hidden' or 'visible'/);
    });

    it('keeps a built-in class hidden when a model for it is registered without @AgentHidden', () => {
      @ParseClass('_Session')
      class SessionModel {}
      const registry = new MetadataRegistry().register(SessionModel);
      expect(registry.isHidden('_Session', true)).toBe(true);
    });

    it('hides decorated models and finds them by any name variant', () => {
      @AgentHidden()
      @ParseClass('_Installation')
      class Device {}
      const registry = new MetadataRegistry().register(Device);
      expect(registry.isHidden('_Installation')).toBe(true);
      expect(registry.hiddenEntry('_Installation')).toEqual({ except: undefined });
    });

    it("lets only master-key agents through an except: 'masterKey' class", () => {
      @AgentHidden({ except: 'masterKey' })
      class AuditLog {}
      const registry = new MetadataRegistry().register(AuditLog);
      expect(registry.isHidden('AuditLog')).toBe(true);
      expect(registry.isHidden('AuditLog', false)).toBe(true);
      expect(registry.isHidden('AuditLog', true)).toBe(false);
      expect(registry.hiddenEntry('AuditLog')).toEqual({ except: 'masterKey' });
    });

    it("relaxes a built-in class when its model declares except: 'masterKey'", () => {
      @AgentHidden({ except: 'masterKey' })
      @ParseClass('_Session')
      class SessionModel {}
      const registry = new MetadataRegistry().register(SessionModel);
      expect(registry.isHidden('_Session', true)).toBe(false);
      expect(registry.isHidden('_Session', false)).toBe(true);
    });

    it('hides a class by name, validating the name and the except option', () => {
      const registry = new MetadataRegistry();
      registry.hide('Ledger');
      registry.hide('Payroll', { except: 'masterKey' });
      expect(registry.isHidden('Ledger', true)).toBe(true);
      expect(registry.isHidden('Payroll', true)).toBe(false);
      expect(registry.isHidden('Payroll')).toBe(true);
      expect(() => registry.hide('not a class')).toThrow(
        'Cannot hide "not a class": not a valid Parse class name.',
      );
      expect(() => registry.hide('Ledger', { except: 'admin' as never })).toThrow(
        "hide(): except only accepts 'masterKey'.",
      );
    });

    it('unhides a class, printing one security banner per call', () => {
      const registry = new MetadataRegistry();
      expect(registry.unhide('_Session')).toBe(true);
      expect(registry.isHidden('_Session', true)).toBe(false);
      expect(banners).toHaveLength(1);
      expect(banners[0]).toMatch(/^Class '_Session' was unhidden/);
      expect(banners[0]).toContain('Master-key agents bypass ACLs and CLPs');

      registry.hide('_Session');
      expect(registry.unhide('_Session')).toBe(true);
      expect(banners).toHaveLength(2);
    });

    it('returns false and prints nothing for a class that is not hidden', () => {
      const registry = new MetadataRegistry({ unregisteredClasses: 'visible' });
      expect(registry.unhide('Order')).toBe(false);
      expect(registry.unhide('_User')).toBe(false);
      registry.unhide('_Product');
      expect(registry.unhide('_Product')).toBe(false);
      expect(banners).toHaveLength(1);
    });

    it('prints no banner when security banners are suppressed, but still unhides', () => {
      suppressSecurityBanners();
      const registry = new MetadataRegistry();
      expect(registry.unhide('_JobStatus')).toBe(true);
      expect(registry.isHidden('_JobStatus')).toBe(false);
      expect(banners).toEqual([]);
    });

    it('does not share hidden state between registries', () => {
      const a = new MetadataRegistry();
      a.unhide('_Session');
      a.hide('Ledger');
      const b = new MetadataRegistry({ unregisteredClasses: 'visible' });
      expect(b.isHidden('_Session')).toBe(true);
      expect(b.isHidden('Ledger')).toBe(false);
    });
  });

  describe('relation graph', () => {
    function models() {
      @ParseClass('Customer')
      class CustomerModel {}
      class Order {
        @BelongsTo(() => CustomerModel)
        customer?: unknown;
        @AgentField({ field: 'created_by' })
        @BelongsTo('_User')
        owner?: unknown;
        @BelongsTo(() => 'Warehouse', { field: 'warehouse_ptr' })
        warehouse?: unknown;
      }
      class Team {
        @HasMany(() => CustomerModel, { through: 'relation' })
        members?: unknown;
        @HasMany(() => Order, { through: 'relation', field: 'order_list' })
        orders?: unknown;
        @HasMany(() => Order)
        viaPointer?: unknown;
      }
      return { CustomerModel, Order, Team };
    }

    it('draws 1:N edges for @BelongsTo and N:M edges for @HasMany through relation', () => {
      const { CustomerModel, Order, Team } = models();
      const registry = new MetadataRegistry().register(Order, Team, CustomerModel);
      expect(registry.relationGraph()).toEqual([
        { from: 'Customer', to: 'Order', via: 'Order.customer', cardinality: '1:N' },
        { from: '_User', to: 'Order', via: 'Order.created_by', cardinality: '1:N' },
        { from: 'Warehouse', to: 'Order', via: 'Order.warehouse_ptr', cardinality: '1:N' },
        { from: 'Team', to: 'Customer', via: 'Team.members', cardinality: 'N:M' },
        { from: 'Team', to: 'Order', via: 'Team.order_list', cardinality: 'N:M' },
      ]);
    });

    it('draws no edge for @HasMany through a pointer (the other side owns it)', () => {
      const { CustomerModel, Order, Team } = models();
      const graph = new MetadataRegistry().register(Order, Team, CustomerModel).relationGraph();
      expect(graph.filter((e) => e.via === 'Team.viaPointer')).toEqual([]);
    });

    it('records pointer references by wire name, resolving models declared later', () => {
      const { CustomerModel, Order } = models();
      const meta = new MetadataRegistry().register(Order, CustomerModel).get('Order')!;
      expect({ ...meta.references }).toEqual({
        customer: 'Customer',
        created_by: '_User',
        warehouse_ptr: 'Warehouse',
      });
      expect(meta.propertyToWire).toMatchObject({
        owner: 'created_by',
        warehouse: 'warehouse_ptr',
      });
    });

    it('splits edges into outgoing and incoming for a class', () => {
      const { CustomerModel, Order, Team } = models();
      const registry = new MetadataRegistry().register(Order, Team, CustomerModel);
      const { outgoing, incoming } = registry.relationsFor('Customer');
      expect(outgoing).toEqual([
        { from: 'Customer', to: 'Order', via: 'Order.customer', cardinality: '1:N' },
      ]);
      expect(incoming).toEqual([
        { from: 'Team', to: 'Customer', via: 'Team.members', cardinality: 'N:M' },
      ]);
    });

    it('uses only visible models once any model is visible', () => {
      @AgentVisible()
      class Invoice {
        @BelongsTo('Customer')
        customer?: unknown;
      }
      class Draft {
        @BelongsTo('Customer')
        customer?: unknown;
      }
      const graph = new MetadataRegistry().register(Invoice, Draft).relationGraph();
      expect(graph).toEqual([
        { from: 'Customer', to: 'Invoice', via: 'Invoice.customer', cardinality: '1:N' },
      ]);
    });

    it('leaves out _-prefixed models other than _User and _Role', () => {
      @ParseClass('_Installation')
      class Device {
        @BelongsTo('_User')
        user?: unknown;
      }
      @ParseClass('_User')
      class AppUser {
        @BelongsTo('Team')
        team?: unknown;
      }
      const graph = new MetadataRegistry().register(Device, AppUser).relationGraph();
      expect(graph).toEqual([{ from: 'Team', to: '_User', via: '_User.team', cardinality: '1:N' }]);
    });

    it('lets a subclass redeclare an inherited pointer, the last declaration winning', () => {
      class Order {
        @BelongsTo('Customer')
        customer?: unknown;
      }
      class PriorityOrder extends Order {
        @BelongsTo('VipCustomer')
        declare customer?: unknown;
      }
      const registry = new MetadataRegistry().register(Order, PriorityOrder);
      expect(registry.get('PriorityOrder')!.references.customer).toBe('VipCustomer');
      expect(registry.get('Order')!.references.customer).toBe('Customer');
    });

    it('deduplicates identical edges', () => {
      class Order {
        @BelongsTo('Customer', { field: 'customer' })
        customer?: unknown;
        @BelongsTo('Customer', { field: 'customer' })
        buyer?: unknown;
      }
      expect(new MetadataRegistry().register(Order).relationGraph()).toHaveLength(1);
    });
  });
});
