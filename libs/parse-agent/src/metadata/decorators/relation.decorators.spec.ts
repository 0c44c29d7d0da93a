import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import { BelongsTo, HasMany } from './relation.decorators';

describe('@BelongsTo / @HasMany', () => {
  it('record relations in declaration order, with pointer as the default for HasMany', () => {
    class Customer {}
    class Order {
      @BelongsTo(() => Customer)
      customer?: unknown;
      @BelongsTo('_User', { field: 'created_by' })
      owner?: unknown;
      @HasMany('LineItem')
      items?: unknown;
      @HasMany('Tag', { through: 'relation', field: 'tag_list' })
      tags?: unknown;
    }
    const meta = new MetadataRegistry().register(Order, Customer).get('Order')!;
    expect(meta.relations.map(({ target: _t, ...rest }) => rest)).toEqual([
      { kind: 'belongsTo', property: 'customer', field: undefined },
      { kind: 'belongsTo', property: 'owner', field: 'created_by' },
      { kind: 'hasMany', property: 'items', field: undefined, through: 'pointer' },
      { kind: 'hasMany', property: 'tags', field: 'tag_list', through: 'relation' },
    ]);
    expect({ ...meta.references }).toEqual({ customer: 'Customer', created_by: '_User' });
  });

  it.each([[42], [null], [{}]])(
    'refuse a target that is neither a name nor a function (%p)',
    (t) => {
      expect(() => {
        class Order {
          @BelongsTo(t as never)
          customer?: unknown;
        }
        return Order;
      }).toThrow(
        new ParseAgentConfigError(
          '@BelongsTo on Order: pass the target as a class name or a function returning the model class, e.g. () => Customer.',
        ),
      );
      expect(() => {
        class Order {
          @HasMany(t as never)
          items?: unknown;
        }
        return Order;
      }).toThrow(/^@HasMany on Order: pass the target/);
    },
  );

  it("refuses a through other than 'relation' or 'pointer'", () => {
    expect(() => {
      class Team {
        @HasMany('Member', { through: 'join' as never })
        members?: unknown;
      }
      return Team;
    }).toThrow("@HasMany on Team: through must be 'relation' or 'pointer'.");
  });
});
