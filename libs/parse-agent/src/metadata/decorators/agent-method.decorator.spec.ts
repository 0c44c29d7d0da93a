import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import { AgentMethod } from './agent-method.decorator';

describe('@AgentMethod', () => {
  it('records instance and static methods, readonly by default', () => {
    class Order {
      @AgentMethod({ description: 'Totals the order' })
      total() {
        return 0;
      }
      @AgentMethod({ permission: 'write', supportsDryRun: true, permittedKeys: ['status'] })
      static close() {
        return true;
      }
    }
    const methods = new MetadataRegistry().register(Order).get('Order')!.methods;
    expect(methods).toEqual([
      { description: 'Totals the order', permission: 'readonly', name: 'total', static: false },
      {
        permission: 'write',
        supportsDryRun: true,
        permittedKeys: ['status'],
        name: 'close',
        static: true,
      },
    ]);
  });

  it.each(['owner', 'root', 'WRITE'])('refuses the permission %p', (permission) => {
    expect(() => {
      class Order {
        @AgentMethod({ permission: permission as never })
        close() {}
      }
      return Order;
    }).toThrow(
      new ParseAgentConfigError(
        `@AgentMethod on Order: permission must be readonly, write or admin (got ${JSON.stringify(permission)}).`,
      ),
    );
  });

  it('refuses permittedKeys that is not an array', () => {
    expect(() => {
      class Order {
        @AgentMethod({ permittedKeys: 'status' as never })
        close() {}
      }
      return Order;
    }).toThrow('@AgentMethod on Order: permittedKeys must be an array of field names.');
  });
});
