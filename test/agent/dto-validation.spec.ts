import { Injectable, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  AgentField,
  AgentFields,
  AgentMethod,
  AgentTool,
  AgentVisible,
  ParseAgentFactory,
  ParseAgentModule,
  ParseClass,
  type ParseAgent,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObject, createUser, defineClass } from '../harness/fixtures';
import { findRows, parseRest, testParseConnection } from '../harness/parse-rest';

/**
 * class-validator DTOs where a JSON Schema is accepted, and class-validator rules on a model for
 * raw writes, against the test run's real Parse Server.
 */
const run = Date.now().toString(36);
const ACCOUNT = `DtoAccount_${run}`;

class Window {
  @IsInt()
  @Min(1)
  @Max(365)
  days!: number;
}

class QuoteDto {
  @IsInt()
  @Min(1)
  amount!: number;

  @IsOptional()
  @IsEmail()
  notify?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => Window)
  window?: Window;
}

class SearchDto {
  @IsString()
  @MaxLength(20)
  term!: string;

  @IsIn(['asc', 'desc'])
  order!: string;

  @IsOptional()
  @IsEmail()
  replyTo?: string;
}

@ParseClass(ACCOUNT)
@AgentVisible()
@AgentFields('email', 'total', 'note')
class Account {
  @AgentField({ description: 'Where receipts go.' })
  @IsEmail()
  email!: string;

  @Min(0)
  total!: number;

  @AgentField({ description: 'Free text; no validation rule.' })
  note?: string;

  @AgentMethod({ description: 'Prices a refund.', parameters: QuoteDto })
  static quote(args: QuoteDto) {
    return {
      isDto: args instanceof QuoteDto,
      nestedIsDto: args.window === undefined || args.window instanceof Window,
      amount: args.amount,
    };
  }
}

/** Lets only agents of tenant acme through. */
class AcmeOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.getArgByIndex<PolicedToolContext>(1).agent.tenantId === 'acme';
  }
}

class NotifyDto {
  @IsEmail()
  to!: string;
}

@Injectable()
class SearchService {
  notified: string[] = [];

  @AgentTool({ name: 'dto_notify', description: 'Acme only.', inputSchema: NotifyDto })
  @UseGuards(AcmeOnlyGuard)
  notify(args: NotifyDto) {
    this.notified.push(args.to);
    return { sent: args.to };
  }

  @AgentTool({ name: 'dto_search', description: 'Searches by term.', inputSchema: SearchDto })
  search(args: SearchDto, context: PolicedToolContext) {
    return { isDto: args instanceof SearchDto, term: args.term, tenant: context.agent.tenantId };
  }
}

const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;

describe('class-validator DTOs and model rules (real Parse Server)', () => {
  let module: TestingModule;
  let factory: ParseAgentFactory;
  let token: string;
  let accountId: string;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    suppressSecurityBanners();
    await defineClass(ACCOUNT, {
      email: { type: 'String' },
      total: { type: 'Number' },
      note: { type: 'String' },
    });
    token = (await createUser(`dto_${run}`, 'pw-dto-1')).sessionToken;
    accountId = await createObject(
      ACCOUNT,
      { email: 'first@example.com', total: 10, note: 'seed' },
      { '*': { read: true, write: true } },
    );
    module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [Account],
          schemaCacheTtlMs: 0,
          rateLimiter: new KeyedSlidingWindowRateLimiter(10_000, 60),
        }),
      ],
      providers: [SearchService],
    }).compile();
    await module.init();
    factory = module.get(ParseAgentFactory);
  }, 60_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    await module?.close();
  });

  const agent = (): ParseAgent =>
    factory.create({ sessionToken: token, permissions: 'write', allowMutations: true });

  const rows = () => findRows(ACCOUNT, {}, { masterKey: true });

  describe('@AgentMethod({ parameters: Dto })', () => {
    it('shows the derived JSON Schema in get_schema', async () => {
      const schema = ok(await agent().execute('get_schema', { class_name: ACCOUNT }));
      const quote = (schema.agent_methods as Data[]).find((m) => m.name === 'quote');
      expect(quote?.parameters).toEqual({
        type: 'object',
        properties: {
          amount: { type: 'integer', minimum: 1 },
          notify: { type: 'string', format: 'email' },
          window: {
            type: 'object',
            properties: { days: { type: 'integer', minimum: 1, maximum: 365 } },
            required: ['days'],
            additionalProperties: false,
          },
          // Every method takes the preview flag.
          dry_run: { type: 'boolean', description: expect.any(String) },
        },
        required: ['amount'],
        additionalProperties: false,
      });
    });

    it('refuses a bad call naming each failed constraint, and never runs the method', async () => {
      const result = refused(
        await agent().execute('call_method', {
          class_name: ACCOUNT,
          method_name: 'quote',
          arguments: { amount: 0, notify: 'not-an-email', window: { days: 400 } },
        }),
      );
      expect(result.error_code).toBe('invalid_argument');
      expect(result.error).toContain('amount must not be less than 1');
      expect(result.error).toContain('notify must be an email');
      expect(result.error).toContain('window.days: days must not be greater than 365');
    });

    it('refuses an unknown argument and names the accepted ones', async () => {
      const result = refused(
        await agent().execute('call_method', {
          class_name: ACCOUNT,
          method_name: 'quote',
          arguments: { amount: 2, amout: 2 },
        }),
      );
      // The same code as a DTO rule failure: both are wrong arguments, not a refusal.
      expect(result.error_code).toBe('invalid_argument');
      expect(result.error).toMatch(/'amout' is not accepted.*Accepted: amount, notify, window/);
    });

    it('runs a good call with the DTO instance', async () => {
      const data = ok(
        await agent().execute('call_method', {
          class_name: ACCOUNT,
          method_name: 'quote',
          arguments: { amount: 5, window: { days: 30 } },
        }),
      );
      expect(data.result).toEqual({ isDto: true, nestedIsDto: true, amount: 5 });
    });
  });

  describe('@AgentTool({ inputSchema: Dto })', () => {
    it('lists the derived JSON Schema in tools/list', () => {
      const tool = agent()
        .toolDefinitions()
        .find((t) => t.name === 'dto_search') as Data | undefined;
      expect(tool?.inputSchema).toEqual({
        type: 'object',
        properties: {
          term: { type: 'string', maxLength: 20 },
          order: { type: 'string', enum: ['asc', 'desc'] },
          replyTo: { type: 'string', format: 'email' },
        },
        required: ['term', 'order'],
        additionalProperties: false,
      });
    });

    it('refuses a bad call naming the failed constraints, and runs a good one with the DTO', async () => {
      const bad = refused(
        await agent().execute('dto_search', { term: 'x'.repeat(30), order: 'sideways' }),
      );
      expect(bad.error_code).toBe('invalid_argument');
      expect(bad.error).toMatch(/term/);
      expect(bad.error).toMatch(/order/);
      // A rule JSON Schema checkers may skip (formats) is still enforced by class-validator.
      const email = refused(
        await agent().execute('dto_search', { term: 'a', order: 'asc', replyTo: 'nope' }),
      );
      expect(email.error_code).toBe('invalid_argument');
      expect(email.error).toContain('replyTo: replyTo must be an email');
      const unknown = refused(
        await agent().execute('dto_search', { term: 'a', order: 'asc', x: 1 }),
      );
      expect(unknown.error).toContain("unknown argument 'x'");
      expect(ok(await agent().execute('dto_search', { term: 'lamp', order: 'asc' }))).toEqual({
        isDto: true,
        term: 'lamp',
      });
    });
  });

  it('keeps the guards of a DTO tool, and runs them before class-validator', async () => {
    const globex = factory.create({ tenantId: 'globex' });
    const acme = factory.create({ tenantId: 'acme' });
    // A refused caller learns nothing about the arguments.
    expect(refused(await globex.execute('dto_notify', { to: 'nope' })).error_code).toBe(
      'access_denied',
    );
    expect(refused(await globex.execute('dto_notify', { to: 'a@b.co' })).error_code).toBe(
      'access_denied',
    );
    expect(refused(await acme.execute('dto_notify', { to: 'nope' })).error).toContain(
      'to: to must be an email',
    );
    expect(ok(await acme.execute('dto_notify', { to: 'a@b.co' }))).toEqual({ sent: 'a@b.co' });
    expect(module.get(SearchService).notified).toEqual(['a@b.co']);
  });

  describe('create_object / update_object and the model rules', () => {
    it('refuses a create that breaks @IsEmail and @Min, and writes nothing', async () => {
      const before = await rows();
      const result = refused(
        await agent().execute('create_object', {
          class_name: ACCOUNT,
          values: { email: 'nope', total: -5, note: 'bad' },
        }),
      );
      expect(result.error_code).toBe('invalid_argument');
      expect(result.error).toContain('email: email must be an email');
      expect(result.error).toContain('total: total must not be less than 0');
      expect(result.error).toContain('Nothing was written');
      expect(await rows()).toHaveLength(before.length);
    });

    it('checks every rule on create (a missing rule-bound field is refused)', async () => {
      const result = refused(
        await agent().execute('create_object', {
          class_name: ACCOUNT,
          values: { email: 'ok@example.com' },
        }),
      );
      expect(result.error).toContain('total must not be less than 0');
      expect(result.error).not.toContain('email must be');
    });

    it('creates a valid object', async () => {
      const data = ok(
        await agent().execute('create_object', {
          class_name: ACCOUNT,
          values: { email: 'new@example.com', total: 0 },
        }),
      );
      const created = await parseRest<Data>(
        'GET',
        `/classes/${ACCOUNT}/${data.object_id as string}`,
        undefined,
        { masterKey: true },
      );
      expect(created).toMatchObject({ email: 'new@example.com', total: 0 });
    });

    it('checks only the fields an update sends', async () => {
      // Only note: no rule applies, although email and total are not sent.
      ok(
        await agent().execute('update_object', {
          class_name: ACCOUNT,
          object_id: accountId,
          values: { note: 'changed' },
        }),
      );
      const bad = refused(
        await agent().execute('update_object', {
          class_name: ACCOUNT,
          object_id: accountId,
          values: { total: -1 },
        }),
      );
      expect(bad.error_code).toBe('invalid_argument');
      expect(bad.error).toContain('total: total must not be less than 0');
      expect(bad.error).not.toContain('email');
      const stored = await parseRest<Data>('GET', `/classes/${ACCOUNT}/${accountId}`, undefined, {
        masterKey: true,
      });
      expect(stored).toMatchObject({ email: 'first@example.com', total: 10, note: 'changed' });
    });
  });
});
