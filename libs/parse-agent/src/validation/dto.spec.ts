import 'reflect-metadata';
import Parse from 'parse/node';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { AgentValidationError, ParseAgentConfigError } from '../core/errors';
import { dtoJsonSchema, isDtoClass, loadDtoPackages, validateDto } from './dto';
import { checkEntityRules } from './entity-rules';
import { AgentField } from '../metadata/decorators/agent-fields.decorators';

class Address {
  @IsString()
  @MaxLength(10)
  city!: string;
}

class RefundDto {
  @IsInt()
  @Min(1)
  amount!: number;

  @IsOptional()
  @IsEmail()
  notify?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => Address)
  address?: Address;
}

@JSONSchema({ additionalProperties: true })
class OpenDto {
  @IsString()
  label!: string;
}

describe('DTO classes where a JSON Schema is accepted', () => {
  it('tells a DTO class from a JSON Schema object', () => {
    expect(isDtoClass(RefundDto)).toBe(true);
    expect(isDtoClass({ type: 'object' })).toBe(false);
    expect(isDtoClass(undefined)).toBe(false);
  });

  it('derives a closed JSON Schema once, nested DTOs inlined', () => {
    const schema = dtoJsonSchema(RefundDto);
    expect(schema).toEqual({
      type: 'object',
      properties: {
        amount: { type: 'integer', minimum: 1 },
        notify: { type: 'string', format: 'email' },
        address: {
          type: 'object',
          properties: { city: { type: 'string', maxLength: 10 } },
          required: ['city'],
          additionalProperties: false,
        },
      },
      required: ['amount'],
      additionalProperties: false,
    });
    expect(dtoJsonSchema(RefundDto)).toBe(schema);
    expect(dtoJsonSchema(OpenDto).additionalProperties).toBe(true);
  });

  it('returns the DTO instance of a valid call', async () => {
    const value = await validateDto(RefundDto, { amount: 3, address: { city: 'Oslo' } }, 'args');
    expect(value).toBeInstanceOf(RefundDto);
    expect((value as RefundDto).address).toBeInstanceOf(Address);
  });

  it('names each failed property and constraint, nested ones with their path', async () => {
    const error = await validateDto(
      RefundDto,
      { amount: 0, notify: 'nope', address: { city: 'Far too long a name' } },
      "arguments for 'Order.refund'",
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentValidationError);
    const message = (error as Error).message;
    expect(message).toMatch(/^arguments for 'Order\.refund' refused: /);
    expect(message).toContain('amount: amount must not be less than 1');
    expect(message).toContain('notify: notify must be an email');
    expect(message).toContain('address.city: city must be shorter than or equal to 10 characters');
  });

  it('refuses an unknown argument and lists the accepted ones, unless the DTO opts out', async () => {
    await expect(validateDto(RefundDto, { amount: 2, amout: 2 }, 'args')).rejects.toThrow(
      /amout: property amout should not exist.*accepted: amount, notify, address/,
    );
    await expect(validateDto(OpenDto, { label: 'x', extra: 1 }, 'args')).resolves.toMatchObject({
      label: 'x',
      extra: 1,
    });
  });

  it('reads a DTO without rules as "no arguments"', async () => {
    class NoArgs {}
    expect(dtoJsonSchema(NoArgs)).toMatchObject({ type: 'object', properties: {} });
    await expect(validateDto(NoArgs, {}, 'args')).resolves.toBeInstanceOf(NoArgs);
    await expect(validateDto(NoArgs, { x: 1 }, 'args')).rejects.toThrow(
      /x: property x should not exist/,
    );
  });

  it('refuses a non-object', async () => {
    await expect(validateDto(RefundDto, [1], 'args')).rejects.toThrow('args must be an object.');
  });

  it('says which packages to install when they are missing', () => {
    const load = (name: string): unknown => {
      if (name === 'class-validator') return {};
      const error = new Error(`Cannot find module '${name}'`) as Error & { code: string };
      error.code = 'MODULE_NOT_FOUND';
      throw error;
    };
    expect(() => loadDtoPackages(load)).toThrow(ParseAgentConfigError);
    expect(() => loadDtoPackages(load)).toThrow(
      /needs 'class-transformer', 'class-validator-jsonschema', not installed\. .*npm install class-validator class-transformer class-validator-jsonschema/,
    );
  });
});

class Customer {
  @AgentField({ description: 'Where receipts go.', field: 'contact_email' })
  @IsEmail()
  email!: string;

  @Min(0)
  total!: number;

  @AgentField({ description: 'Free text, no rules.' })
  note?: string;
}

class OnlyMetadata {
  @AgentField({ description: 'No validation rules here.' })
  name?: string;
}

describe('class-validator rules on a model, for raw writes', () => {
  const wire = { email: 'contact_email' };

  it('checks every rule on create and names the wire field', async () => {
    const error = await checkEntityRules(
      'Customer',
      Customer,
      { contact_email: 'x', note: 'hi' },
      wire,
      'create',
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentValidationError);
    expect((error as Error).message).toContain('contact_email: email must be an email');
    expect((error as Error).message).toContain('total: total must not be less than 0');
    await expect(
      checkEntityRules('Customer', Customer, { contact_email: 'a@b.co', total: 0 }, wire, 'create'),
    ).resolves.toBeUndefined();
  });

  it('checks only the sent fields on update', async () => {
    await expect(
      checkEntityRules('Customer', Customer, { total: 4 }, wire, 'update'),
    ).resolves.toBeUndefined();
    await expect(
      checkEntityRules('Customer', Customer, { total: -1 }, wire, 'update'),
    ).rejects.toThrow(/total: total must not be less than 0/);
  });

  it('leaves models with only agent metadata, or without class-validator installed, unchecked', async () => {
    await expect(
      checkEntityRules('OnlyMetadata', OnlyMetadata, { name: 5 }, {}, 'create'),
    ).resolves.toBeUndefined();
    const missing = (name: string): unknown => {
      const error = new Error(`Cannot find module '${name}'`) as Error & { code: string };
      error.code = 'MODULE_NOT_FOUND';
      throw error;
    };
    await expect(
      checkEntityRules('Customer', Customer, { total: -1 }, {}, 'update', missing),
    ).resolves.toBeUndefined();
  });

  it('checks a Parse.Object subclass without calling its constructor or accessors', async () => {
    class Invoice extends Parse.Object {
      constructor() {
        super('Invoice');
        throw new Error('the constructor must not run');
      }

      @Min(0)
      get total(): number {
        throw new Error('the accessor must not run');
      }
    }
    await expect(checkEntityRules('Invoice', Invoice, { total: -2 }, {}, 'update')).rejects.toThrow(
      /total: total must not be less than 0/,
    );
    await expect(
      checkEntityRules('Invoice', Invoice, { total: 2 }, {}, 'update'),
    ).resolves.toBeUndefined();
  });
});
