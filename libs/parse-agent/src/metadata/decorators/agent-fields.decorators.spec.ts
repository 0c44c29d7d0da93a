import 'reflect-metadata';
import { ParseAgentConfigError } from '../../core/errors';
import { MetadataRegistry } from '../metadata-registry';
import type { ModelClass } from '../metadata.types';
import {
  AgentField,
  AgentFields,
  AgentJoinFields,
  AgentLargeFields,
  wireNameOf,
} from './agent-fields.decorators';

const compile = (model: ModelClass) => new MetadataRegistry().register(model).get(model.name)!;

describe('@AgentFields', () => {
  it('records the allowlist in wire names, deduplicated, with the always-kept fields', () => {
    @AgentFields('title', 'authorName', 'title')
    class Post {
      @AgentField({ field: 'author_name' })
      authorName?: string;
    }
    expect(compile(Post).fields).toEqual([
      'objectId',
      'createdAt',
      'updatedAt',
      'title',
      'author_name',
    ]);
  });

  it('refuses an empty list', () => {
    expect(() => AgentFields()(class Post {})).toThrow(
      new ParseAgentConfigError('@AgentFields on Post: list at least one field.'),
    );
  });

  it.each(['first name', 'a.b', '1st', '', 'x-y'])('refuses the non-field name %p', (name) => {
    expect(() => AgentFields(name)(class Post {})).toThrow(
      /@AgentFields on Post: .* is not a field name/,
    );
  });

  it.each(['_hashed_password', 'sessionToken', 'authData', '_auth_data_facebook', '_rperm'])(
    'refuses the internal field %s and says it can never be exposed',
    (name) => {
      expect(() => AgentFields('title', name)(class Post {})).toThrow(
        `@AgentFields on Post: '${name}' is an internal Parse field and can never be exposed to agents; remove it.`,
      );
    },
  );

  it('leaves the class without an allowlist when it is not used', () => {
    class Post {}
    expect(compile(Post).fields).toBeUndefined();
  });
});

describe('@AgentJoinFields', () => {
  it('may be declared alone', () => {
    @AgentJoinFields('name')
    class Author {}
    expect(compile(Author).joinFields).toEqual(['name']);
    expect(compile(Author).fields).toBeUndefined();
  });

  it('accepts a subset of @AgentFields, plus the always-kept fields, in either order', () => {
    @AgentFields('name', 'email')
    @AgentJoinFields('name', 'objectId')
    class Above {}
    @AgentJoinFields('email', 'createdAt')
    @AgentFields('name', 'email')
    class Below {}
    expect(compile(Above).joinFields).toEqual(['name', 'objectId']);
    expect(compile(Below).joinFields).toEqual(['email', 'createdAt']);
  });

  it('compares wire names, so a renamed property matches its allowlist entry', () => {
    @AgentJoinFields('display_name')
    @AgentFields('displayName')
    class Author {
      @AgentField({ field: 'display_name' })
      displayName?: string;
    }
    expect(compile(Author).joinFields).toEqual(['display_name']);
  });

  it('refuses join fields outside @AgentFields when @AgentFields is applied last', () => {
    const declare = () => {
      @AgentFields('name')
      @AgentJoinFields('name', 'salary')
      class Author {}
      return Author;
    };
    expect(declare).toThrow(
      new ParseAgentConfigError(
        '@AgentJoinFields on Author: salary is not in @AgentFields; join fields must be a subset of the allowlist. Add them to @AgentFields or drop them here.',
      ),
    );
  });

  it('refuses join fields outside @AgentFields when @AgentJoinFields is applied last', () => {
    const declare = () => {
      @AgentJoinFields('salary', 'ssn')
      @AgentFields('name')
      class Author {}
      return Author;
    };
    expect(declare).toThrow(
      '@AgentJoinFields on Author: salary, ssn are not in @AgentFields; join fields must be a subset',
    );
  });

  it('refuses internal fields and empty lists like @AgentFields', () => {
    expect(() => AgentJoinFields()(class Author {})).toThrow(
      '@AgentJoinFields on Author: list at least one field.',
    );
    expect(() => AgentJoinFields('_hashed_password')(class Author {})).toThrow(
      /@AgentJoinFields on Author: '_hashed_password' is an internal Parse field/,
    );
  });
});

describe('@AgentLargeFields', () => {
  it('records large fields in wire names', () => {
    @AgentLargeFields('body', 'rawHtml')
    class Post {
      @AgentField({ field: 'raw_html' })
      rawHtml?: string;
    }
    expect(compile(Post).largeFields).toEqual(['body', 'raw_html']);
  });

  it('refuses empty lists, bad names and internal fields', () => {
    expect(() => AgentLargeFields()(class Post {})).toThrow('@AgentLargeFields on Post:');
    expect(() => AgentLargeFields('a b')(class Post {})).toThrow('is not a field name');
    expect(() => AgentLargeFields('_perishable_token')(class Post {})).toThrow(
      'is an internal Parse field',
    );
  });
});

describe('@AgentField', () => {
  it('documents a property under its wire name', () => {
    class Order {
      @AgentField({ description: 'Order state', field: 'order_status', type: 'string' })
      status?: string;
      @AgentField()
      total?: number;
    }
    const meta = compile(Order);
    expect(meta.propertyToWire).toEqual({ status: 'order_status', total: 'total' });
    expect(meta.fieldDocs.order_status).toEqual({
      property: 'status',
      field: 'order_status',
      description: 'Order state',
      type: 'string',
      allowedValues: undefined,
    });
    expect(wireNameOf(Order, 'status')).toBe('order_status');
    expect(wireNameOf(Order, 'total')).toBe('total');
    expect(wireNameOf(Order, 'undocumented')).toBe('undocumented');
  });

  it('turns an enum list or a value -> meaning map into string allowed values', () => {
    class Order {
      @AgentField({ enum: ['open', 2] })
      status?: string;
      @AgentField({ enum: { p: 'pending', s: 'shipped' } })
      stage?: string;
    }
    const docs = compile(Order).fieldDocs;
    expect(docs.status.allowedValues).toEqual([
      { value: 'open', description: '' },
      { value: '2', description: '' },
    ]);
    expect(docs.stage.allowedValues).toEqual([
      { value: 'p', description: 'pending' },
      { value: 's', description: 'shipped' },
    ]);
  });

  it('refuses an enum that is neither a list nor a map', () => {
    const declare = (value: unknown) => () => {
      class Order {
        @AgentField({ enum: value as never })
        status?: string;
      }
      return Order;
    };
    expect(declare('open|closed')).toThrow(
      '@AgentField on Order: enum of status must be an array or a value -> description map.',
    );
    expect(declare(3)).toThrow(ParseAgentConfigError);
    expect(declare(null)).toThrow(ParseAgentConfigError);
  });

  it('refuses internal or malformed wire names', () => {
    const declare = (field: string) => () => {
      class AppUser {
        @AgentField({ field })
        secret?: string;
      }
      return AppUser;
    };
    expect(declare('_hashed_password')).toThrow(
      "@AgentField on AppUser: '_hashed_password' (property secret) cannot be documented for agents.",
    );
    expect(declare('authData')).toThrow(ParseAgentConfigError);
    expect(declare('a.b')).toThrow(ParseAgentConfigError);
    expect(() => {
      class AppUser {
        @AgentField()
        sessionToken?: string;
      }
      return AppUser;
    }).toThrow(/sessionToken/);
  });
});
