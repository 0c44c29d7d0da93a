import 'reflect-metadata';
import Parse from 'parse/node';
import {
  AgentDescription,
  AgentFields,
  AgentMethod,
  AgentValidationError,
  ParseClass,
  type AgentMethodContext,
  type MutationEvent,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createUser, type SeededUser } from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * Models written as Parse JS SDK subclasses, the way a Parse app already has them: accessors over
 * this.get(), helpers on the class, this.save(). Class names come from the SDK (no @ParseClass).
 */
@AgentDescription('Invoices, modelled as a Parse.Object subclass.')
@AgentFields('title', 'status', 'amount', 'note', 'views', 'customer')
class Invoice extends Parse.Object {
  constructor() {
    super('SdkInvoice');
  }

  get status(): string {
    return this.get('status') as string;
  }

  get amount(): number {
    return this.get('amount') as number;
  }

  /** A helper of the model itself, not an agent method. */
  isOpen(): boolean {
    return this.status === 'open';
  }

  @AgentMethod({ description: 'What the invoice says.' })
  summary() {
    return {
      sdkInstance: this instanceof Parse.Object && this instanceof Invoice,
      className: this.className,
      id: this.id,
      title: this.get('title'),
      status: this.status,
      amount: this.amount,
      open: this.isOpen(),
      secret: this.get('secret') ?? null,
      fields: Object.keys(this.attributes).sort(),
    };
  }

  @AgentMethod({
    permission: 'write',
    description: 'Mark an open invoice paid.',
    supportsDryRun: true,
    permittedKeys: ['note'],
    parameters: {
      type: 'object',
      properties: { note: { type: 'string', minLength: 2 } },
      required: ['note'],
    },
  })
  async settle(args: { note: string }) {
    if (!this.isOpen()) {
      throw new AgentValidationError(`Invoice ${String(this.get('title'))} is ${this.status}.`);
    }
    // Runs in a preview too: the write path refuses it, whatever the method does.
    this.set('status', 'paid');
    this.set('note', args.note);
    await this.save();
    return { status: this.status, dirty: this.dirtyKeys(), updated: !!this.updatedAt };
  }

  @AgentMethod({ permission: 'write', description: 'Count a view.' })
  async view() {
    this.increment('views');
    await this.save();
    return { views: this.get('views') as number };
  }

  @AgentMethod({ permission: 'write', description: 'Tries to save with the master key.' })
  async forceWithMasterKey() {
    this.set('status', 'paid');
    await this.save(null, { useMasterKey: true });
    return 'saved';
  }

  @AgentMethod({ permission: 'write', description: 'Tries the SDK batch save.' })
  async saveThroughSdk() {
    this.set('status', 'paid');
    await Parse.Object.saveAll([this]);
    return 'saved';
  }

  @AgentMethod({ permission: 'write', description: 'Tries to re-read the object with the SDK.' })
  async refetch() {
    await this.fetch();
    return 'fetched';
  }

  @AgentMethod({ permission: 'write', description: 'Tries to save the customer it points to.' })
  async touchCustomer() {
    const customer = this.get('customer') as Parse.Object;
    customer.set('name', 'changed');
    await customer.save();
    return 'saved';
  }

  @AgentMethod({ permission: 'write', description: 'Delete this invoice.' })
  async discard(_args: unknown, ctx: AgentMethodContext) {
    await this.destroy();
    return { deleted: ctx.objectId };
  }

  @AgentMethod({ description: 'A class method.' })
  static countLabel(_args: unknown, ctx: AgentMethodContext) {
    return { label: `class ${ctx.className}` };
  }
}

/** An SDK model named by registerSubclass only (no constructor of its own). */
@AgentFields('text')
class Receipt extends Parse.Object {
  @AgentMethod({ description: 'Echo the text.' })
  echo() {
    return { text: this.get('text'), className: this.className };
  }
}
Parse.Object.registerSubclass('SdkReceipt', Receipt);

/** The class Invoice points to (a pointer to an unregistered class would be redacted). */
@ParseClass('SdkCustomer')
@AgentFields('name')
class SdkCustomer {}

/** The plain-class style, unchanged. */
@ParseClass('SdkPlainNote')
@AgentFields('text')
class PlainNote {
  declare text: string;

  @AgentMethod({ description: 'Echo the text.' })
  echo() {
    return { text: this.text, plain: !(this instanceof Parse.Object) };
  }
}

const master = { masterKey: true } as const;
const GATE = 'PARSE_AGENT_ALLOW_WRITE_TOOLS';

describe('Parse.Object subclasses as models (real Parse Server)', () => {
  let bed: AgentTestBed;
  let alice: SeededUser;
  let bob: SeededUser;
  let mutations: MutationEvent[];
  let savedGate: string | undefined;
  const created: Array<[string, string]> = [];

  async function make(className: string, values: Data, acl: Data): Promise<string> {
    const row = await parseRest<{ objectId: string }>(
      'POST',
      `/classes/${className}`,
      { ...values, ACL: acl },
      master,
    );
    created.push([className, row.objectId]);
    return row.objectId;
  }
  const rw = { read: true, write: true };
  /** Alice's own invoice. */
  const aliceInvoice = (values: Data = {}) =>
    make(
      'SdkInvoice',
      { title: 'A-1', status: 'open', amount: 40, secret: 'margin 12%', ...values },
      { [alice.objectId]: rw },
    );
  /** Bob's invoice, which Alice may read but not write. */
  const bobInvoice = () =>
    make(
      'SdkInvoice',
      { title: 'B-1', status: 'open', amount: 70 },
      { [alice.objectId]: { read: true }, [bob.objectId]: rw },
    );
  const row = (className: string, objectId: string) =>
    parseRest<Data>('GET', `/classes/${className}/${objectId}`, undefined, master);

  const aliceAgent = (): ParseAgent =>
    bed.factory.create({ sessionToken: alice.sessionToken, permissions: 'write' });
  const call = (agent: ParseAgent, method: string, objectId?: string, args?: Data) =>
    agent.execute('call_method', {
      class_name: 'SdkInvoice',
      method_name: method,
      ...(objectId ? { object_id: objectId } : {}),
      ...(args ? { arguments: args } : {}),
    });

  beforeAll(async () => {
    savedGate = process.env[GATE];
    process.env[GATE] = 'true';
    // The application's own SDK, set up the way a server app does: with the master key, and using
    // it for every request. An agent method's save must never go out through it.
    const { appId, javascriptKey, masterKey, serverURL } = testParseConfig();
    Parse.initialize(appId, javascriptKey, masterKey);
    Parse.serverURL = serverURL;
    // Node's Parse.Cloud.useMasterKey(), missing from the SDK's type declarations.
    (Parse.Cloud as unknown as { useMasterKey(): void }).useMasterKey();
    const suffix = Math.random().toString(36).slice(2, 8);
    alice = await createUser(`sdk-alice-${suffix}`);
    bob = await createUser(`sdk-bob-${suffix}`);
    bed = await createAgentTestBed([Invoice, Receipt, PlainNote, SdkCustomer]);
    mutations = [];
    bed.events.mutations$.subscribe((e) => mutations.push(e));
  }, 60_000);

  afterAll(async () => {
    for (const [className, id] of created) {
      await parseRest('DELETE', `/classes/${className}/${id}`, undefined, master).catch(
        () => undefined,
      );
    }
    if (savedGate === undefined) delete process.env[GATE];
    else process.env[GATE] = savedGate;
    await bed?.close();
  });

  beforeEach(() => {
    mutations.length = 0;
  });

  it('takes the class names from the SDK when @ParseClass is absent', () => {
    expect(bed.metadata.get('SdkInvoice')?.modelName).toBe('Invoice');
    expect(bed.metadata.get('SdkReceipt')?.modelName).toBe('Receipt');
    expect(bed.metadata.get('Invoice')).toBeUndefined();
    expect(bed.metadata.get('SdkPlainNote')?.modelName).toBe('PlainNote');
  });

  it('runs a method on a real SDK instance holding only the fields the agent may read', async () => {
    const id = await aliceInvoice();
    const data = ok(await call(aliceAgent(), 'summary', id));
    expect(data.result).toEqual({
      sdkInstance: true,
      className: 'SdkInvoice',
      id,
      title: 'A-1',
      status: 'open',
      amount: 40,
      open: true,
      // Not in @AgentFields: never loaded into the instance.
      secret: null,
      fields: ['amount', 'createdAt', 'status', 'title', 'updatedAt'],
    });
  });

  it('saves the user’s own object under the user’s session and audits the written keys', async () => {
    const id = await aliceInvoice();
    const data = ok(await call(aliceAgent(), 'settle', id, { note: 'paid by card' }));
    expect(data.result).toEqual({ status: 'paid', dirty: [], updated: true });
    expect(await row('SdkInvoice', id)).toMatchObject({ status: 'paid', note: 'paid by card' });
    expect(mutations).toHaveLength(1);
    expect(mutations[0]).toMatchObject({
      action: 'call_method',
      method: 'SdkInvoice.settle',
      object_id: id,
      changed_keys: ['note', 'status'],
      writes: [
        {
          action: 'update',
          class_name: 'SdkInvoice',
          object_id: id,
          changed_keys: ['note', 'status'],
        },
      ],
    });
    expect(JSON.stringify(mutations[0])).not.toContain('paid by card');
  });

  it('sends SDK operations (increment) and takes the server’s answer back', async () => {
    const id = await aliceInvoice({ views: 2 });
    const data = ok(await call(aliceAgent(), 'view', id));
    expect(data.result).toEqual({ views: 3 });
    expect((await row('SdkInvoice', id)).views).toBe(3);
  });

  it('refuses the save on another user’s readable object: Parse saw the session, not the master key', async () => {
    const id = await bobInvoice();
    const result = refused(await call(aliceAgent(), 'settle', id, { note: 'not mine' }));
    expect(result.error).toContain('may lack write access');
    // The application's SDK uses the master key for everything: had the save gone through it,
    // the row would have changed.
    expect(await row('SdkInvoice', id)).toMatchObject({ status: 'open' });
    expect((await row('SdkInvoice', id)).note).toBeUndefined();
    expect(mutations).toEqual([]);
  });

  it('refuses every write in a dry run and leaves the row unchanged', async () => {
    const id = await aliceInvoice();
    const result = refused(
      await call(aliceAgent(), 'settle', id, { note: 'preview', dry_run: true }),
    );
    expect(result.error_code).toBe('access_denied');
    expect(unwrapUntrusted(result.error)).toContain('dry_run: true and may not write');
    expect(await row('SdkInvoice', id)).toMatchObject({ status: 'open' });
    expect(mutations).toEqual([]);
  });

  it('refuses the master key, the SDK’s own save and fetch paths, and saves through pointers', async () => {
    const customerId = await make('SdkCustomer', { name: 'Ada' }, { [alice.objectId]: rw });
    const id = await aliceInvoice({
      customer: { __type: 'Pointer', className: 'SdkCustomer', objectId: customerId },
    });
    const forced = refused(await call(aliceAgent(), 'forceWithMasterKey', id));
    expect(forced.error_code).toBe('access_denied');
    expect(unwrapUntrusted(forced.error)).toContain('useMasterKey');
    for (const method of ['saveThroughSdk', 'refetch', 'touchCustomer']) {
      const result = refused(await call(aliceAgent(), method, id));
      expect(unwrapUntrusted(result.error)).toContain("with the application's own credentials");
    }
    expect(await row('SdkInvoice', id)).toMatchObject({ status: 'open' });
    expect(await row('SdkCustomer', customerId)).toMatchObject({ name: 'Ada' });
    expect(mutations).toEqual([]);
  });

  it('destroys through the agent’s identity', async () => {
    const mine = await aliceInvoice();
    ok(await call(aliceAgent(), 'discard', mine));
    await expect(row('SdkInvoice', mine)).rejects.toThrow(/not found/i);
    expect(mutations[0]).toMatchObject({
      writes: [{ action: 'delete', class_name: 'SdkInvoice', object_id: mine }],
    });

    const bobs = await bobInvoice();
    refused(await call(aliceAgent(), 'discard', bobs));
    expect(await row('SdkInvoice', bobs)).toMatchObject({ title: 'B-1' });
  });

  it('runs class methods with the model class as this', async () => {
    const data = ok(await call(aliceAgent(), 'countLabel'));
    expect(data.result).toEqual({ label: 'class SdkInvoice' });
  });

  it('builds a registered subclass without a constructor, and keeps plain classes working', async () => {
    const receiptId = await make('SdkReceipt', { text: 'thanks' }, { [alice.objectId]: rw });
    const noteId = await make('SdkPlainNote', { text: 'plain' }, { [alice.objectId]: rw });
    const receipt = ok(
      await aliceAgent().execute('call_method', {
        class_name: 'SdkReceipt',
        method_name: 'echo',
        object_id: receiptId,
      }),
    );
    expect(receipt.result).toEqual({ text: 'thanks', className: 'SdkReceipt' });
    const note = ok(
      await aliceAgent().execute('call_method', {
        class_name: 'SdkPlainNote',
        method_name: 'echo',
        object_id: noteId,
      }),
    );
    expect(note.result).toEqual({ text: 'plain', plain: true });
  });

  it('finds no object the user may not read, so no method runs on it', async () => {
    const hidden = await make(
      'SdkInvoice',
      { title: 'C-1', status: 'open' },
      { [bob.objectId]: rw },
    );
    const result = refused(await call(aliceAgent(), 'summary', hidden));
    expect(result.error).toContain(`Object not found: SdkInvoice#${hidden}`);
  });
});
