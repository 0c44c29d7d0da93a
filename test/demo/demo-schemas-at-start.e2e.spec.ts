import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MetadataRegistry } from 'nestjs-parse-agent';
import type { ParseSchema } from 'nestjs-parse-agent/core/parse-schema';
import {
  auditDeclaredNames,
  declaredNameWarnings,
} from 'nestjs-parse-agent/metadata/metadata-audit';
import { findFreePort } from '../../src/embedded/free-port';
import { CORE_MODELS, SupportTicket } from '../../src/example/models';

const ROOT = resolve(__dirname, '..', '..');

/** Runs the demo host up to where it creates the example app; Parse's classes at that moment. */
async function schemasBeforeTheApp(dataDir: string): Promise<ParseSchema[]> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      join(ROOT, 'test/harness/ts-register.js'),
      join(ROOT, 'test/demo/demo-host-before-app.child.ts'),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        LOG_FORMAT: 'json',
        DATA_DIR: dataDir,
        PORT: String(await findFreePort()),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  const line = output.split('\n').find((l) => l.startsWith('SCHEMAS '));
  expect({ code, printed: Boolean(line) }).toEqual({ code: 0, printed: true });
  return (JSON.parse(line!.slice('SCHEMAS '.length)) as { results: ParseSchema[] }).results;
}

/**
 * The library reads the schemas as soon as Parse Server answers (the declared-names warnings, the
 * boot audit), which is right after the demo listens, while the seed may still be running. So the
 * demo's classes must be complete before the example app exists, not once the seed got to them: a
 * fresh start then never warns, whichever runs first. Checked where the host creates the app, on a
 * fresh DATA_DIR, with the same oracle the library's warning uses.
 */
describe('demo host: the demo classes exist before the example app is created', () => {
  let dir: string;
  let schemas: ParseSchema[];
  const byName = (name: string) => schemas.find((s) => s.className === name);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'demo-schemas-'));
    await chmod(dir, 0o755); // embedded PostgreSQL runs as another user when we are root
    schemas = await schemasBeforeTheApp(dir);
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('every name the demo models declare is a field of its class (no declared-names warning)', () => {
    const models = [...CORE_MODELS, SupportTicket];
    const registry = new MetadataRegistry().register(...models);
    expect(declaredNameWarnings(auditDeclaredNames(registry, schemas))).toEqual([]);
    for (const model of models) {
      const className = new MetadataRegistry().register(model).all()[0].className;
      expect({ className, exists: Boolean(byName(className)) }).toEqual({
        className,
        exists: true,
      });
    }
    expect(Object.keys(byName('_User')!.fields)).toEqual(
      expect.arrayContaining(['fullName', 'tenantId']),
    );
  });

  it('their class-level permissions are in place from the start: secrets, roles and tenant data closed to clients, _User as Parse leaves it', () => {
    const clp = (name: string) => byName(name)!.classLevelPermissions as Record<string, unknown>;
    const closed = {
      find: {},
      get: {},
      count: {},
      create: {},
      update: {},
      delete: {},
      addField: {},
    };
    expect(clp('ApiCredential')).toMatchObject(closed);
    expect(clp('_Role')).toMatchObject(closed);
    for (const name of ['Tenant', 'Customer', 'Product', 'Order', 'SupportTicket']) {
      const find = clp(name).find as Record<string, boolean>;
      // Order's find also admits signed-in users: Parse LiveQuery (resource subscriptions) checks
      // it without roles. Its rows' ACLs keep each tenant's orders to that tenant's staff.
      const expected =
        name === 'Order'
          ? { 'role:staff': true, requiresAuthentication: true }
          : { 'role:staff': true };
      expect({ name, find }).toEqual({ name, find: expected });
      expect(clp(name).addField).toEqual({});
    }
    // A CLP Parse applies replaces the whole CLP: _User must not come out closed (sign-up, a staff
    // member's reads of User); Parse closes addField on every class it applies definitions to.
    const open = { '*': true };
    expect(clp('_User')).toMatchObject({
      find: open,
      get: open,
      count: open,
      create: open,
      update: open,
      delete: open,
      addField: {},
    });
    expect((clp('Customer').protectedFields as Record<string, string[]>)['*']).toEqual([
      'phone',
      'email',
    ]);
  });
});
