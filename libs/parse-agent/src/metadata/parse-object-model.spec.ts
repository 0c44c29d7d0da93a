import 'reflect-metadata';
import Parse from 'parse/node';
import { ParseAgentConfigError } from '../core/errors';
import { AgentMethod } from './decorators/agent-method.decorator';
import { AgentFields } from './decorators/agent-fields.decorators';
import { ParseClass } from './decorators/parse-class.decorator';
import { MetadataRegistry } from './metadata-registry';
import { isParseObjectModel } from './parse-object-model';

/** Models written against the real Parse JS SDK (the application's own copy of `parse`). */
describe('Parse.Object subclasses as models', () => {
  it('tells SDK subclasses from plain classes by their shape', () => {
    class Order extends Parse.Object {}
    class AppUser extends Parse.User {}
    class Plain {
      get(): void {}
      set(): void {}
    }
    expect(isParseObjectModel(Order)).toBe(true);
    expect(isParseObjectModel(AppUser)).toBe(true);
    expect(isParseObjectModel(Plain)).toBe(false);
    expect(isParseObjectModel(class {})).toBe(false);
  });

  it('takes the class name the subclass passes to super()', () => {
    @AgentFields('status')
    class OrderModel extends Parse.Object {
      constructor() {
        super('Order');
      }

      @AgentMethod()
      summary() {
        return this.get('status') as unknown;
      }
    }
    const registry = new MetadataRegistry().register(OrderModel);
    expect(registry.get('Order')).toMatchObject({ modelName: 'OrderModel', model: OrderModel });
    expect(registry.get('Order')?.methods.map((m) => m.name)).toEqual(['summary']);
    expect(registry.get('OrderModel')).toBeUndefined();
    expect(registry.resolveClassName(OrderModel)).toBe('Order');
  });

  it('takes the name registerSubclass recorded, and _User for a Parse.User subclass', () => {
    class ReceiptModel extends Parse.Object {}
    Parse.Object.registerSubclass('Receipt', ReceiptModel);
    class AppUser extends Parse.User {}
    const registry = new MetadataRegistry().register(ReceiptModel, AppUser);
    expect(registry.get('Receipt')?.modelName).toBe('ReceiptModel');
    expect(registry.get('_User')?.modelName).toBe('AppUser');
  });

  it('falls back to the class name when the SDK names nothing', () => {
    class Invoice extends Parse.Object {}
    expect(new MetadataRegistry().register(Invoice).get('Invoice')?.modelName).toBe('Invoice');
    // Unregistered models (relation targets) resolve the same way.
    class Shipment extends Parse.Object {
      constructor() {
        super('Delivery');
      }
    }
    expect(new MetadataRegistry().resolveClassName(Shipment)).toBe('Delivery');
  });

  it('accepts an @ParseClass that agrees with the SDK and refuses one that does not', () => {
    @ParseClass('Order')
    class Agreeing extends Parse.Object {
      constructor() {
        super('Order');
      }
    }
    expect(new MetadataRegistry().register(Agreeing).get('Order')?.modelName).toBe('Agreeing');

    @ParseClass('Order')
    class Disagreeing extends Parse.Object {
      constructor() {
        super('Invoice');
      }
    }
    expect(() => new MetadataRegistry().register(Disagreeing)).toThrow(ParseAgentConfigError);
    expect(() => new MetadataRegistry().register(Disagreeing)).toThrow(
      "Model Disagreeing is declared @ParseClass('Order') but its Parse.Object instances have className 'Invoice'",
    );
  });

  it('asks for @ParseClass when the model cannot be built to read its name', () => {
    class Strict extends Parse.Object {
      constructor(required: { tenant: string }) {
        super(`Strict_${required.tenant}`);
      }
    }
    expect(() => new MetadataRegistry().register(Strict)).toThrow(
      /constructing it without arguments to read its Parse class name failed .*Name the class with @ParseClass\('Name'\)/,
    );
    @ParseClass('Strict_acme')
    class Named extends Strict {}
    expect(new MetadataRegistry().register(Named).get('Strict_acme')?.modelName).toBe('Named');
  });
});
