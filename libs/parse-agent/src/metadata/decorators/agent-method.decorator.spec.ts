import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import { AgentMethod } from './agent-method.decorator';
import { IsInt, Min } from 'class-validator';

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

  it('takes a class-validator DTO as parameters: its JSON Schema is derived once, the class kept', () => {
    class RefundDto {
      @IsInt()
      @Min(1)
      amount!: number;
    }
    class Order {
      @AgentMethod({ permission: 'write', parameters: RefundDto })
      refund() {}
      @AgentMethod({ parameters: { type: 'object', properties: {} } })
      static plain() {}
    }
    const [refund, plain] = new MetadataRegistry().register(Order).get('Order')!.methods;
    expect(refund.parametersDto).toBe(RefundDto);
    expect(refund.parameters).toEqual({
      type: 'object',
      properties: { amount: { type: 'integer', minimum: 1 } },
      required: ['amount'],
      additionalProperties: false,
    });
    expect(plain.parametersDto).toBeUndefined();
    expect(plain.parameters).toEqual({ type: 'object', properties: {} });
  });

  it('refuses parameters that are neither a JSON Schema nor a DTO class', () => {
    expect(() => {
      class Order {
        @AgentMethod({ parameters: 'amount:number' as never })
        refund() {}
      }
      return Order;
    }).toThrow(/parameters must be a JSON Schema object or a class-validator DTO class/);
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
