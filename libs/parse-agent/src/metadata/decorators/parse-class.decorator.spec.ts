import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import {
  AgentAllowCollscan,
  AgentDescription,
  AgentVisible,
  ParseClass,
} from './parse-class.decorator';

describe('@ParseClass', () => {
  it('maps the model to the named Parse class', () => {
    @ParseClass('_User')
    class AppUser {}
    const registry = new MetadataRegistry().register(AppUser);
    expect(registry.get('_User')?.modelName).toBe('AppUser');
    expect(registry.get('AppUser')).toBeUndefined();
  });

  it.each(['has space', '1Order', 'Order$', 'a.b', '', 'x'.repeat(129)])(
    'refuses the invalid class name %p',
    (name) => {
      expect(() => ParseClass(name)(class Order {})).toThrow(ParseAgentConfigError);
      expect(() => ParseClass(name)(class Order {})).toThrow(
        /^@ParseClass on Order: ".*" is not a valid Parse class name/,
      );
    },
  );

  it('accepts a name of 128 characters', () => {
    expect(() => ParseClass('x'.repeat(128))(class Order {})).not.toThrow();
  });

  it('refuses a non-string name', () => {
    expect(() => ParseClass(42 as never)(class Order {})).toThrow(ParseAgentConfigError);
  });
});

describe('@AgentDescription', () => {
  it('records the trimmed description', () => {
    @AgentDescription('  Customer orders.  ')
    class Order {}
    expect(new MetadataRegistry().register(Order).get('Order')?.description).toBe(
      'Customer orders.',
    );
  });

  it('records an optional usage hint apart from the description', () => {
    @AgentDescription('Customer orders.', { usage: '  Group by status; filter on createdAt.  ' })
    class Order {}
    class Plain {}
    const registry = new MetadataRegistry().register(Order).register(Plain);
    expect(registry.get('Order')?.usage).toBe('Group by status; filter on createdAt.');
    expect(registry.get('Plain')?.usage).toBeUndefined();
    for (const usage of ['', ' ', 3]) {
      expect(() => AgentDescription('x', { usage: usage as never })(class Order {})).toThrow(
        '@AgentDescription on Order: usage must be a non-empty string.',
      );
    }
  });

  it.each(['', '   ', 3])('refuses %p', (text) => {
    expect(() => AgentDescription(text as never)(class Order {})).toThrow(
      '@AgentDescription on Order: the description must be a non-empty string.',
    );
  });
});

describe('@AgentVisible and @AgentAllowCollscan', () => {
  it('set their flags, which default to false', () => {
    @AgentVisible()
    @AgentAllowCollscan()
    class Order {}
    class Plain {}
    const registry = new MetadataRegistry().register(Order, Plain);
    expect(registry.get('Order')).toMatchObject({ visible: true, allowCollscan: true });
    expect(registry.get('Plain')).toMatchObject({ visible: false, allowCollscan: false });
  });
});
