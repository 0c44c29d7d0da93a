import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import express from 'express';
import { ENV_GATES } from 'nestjs-parse-agent/ops';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { requestContextMiddleware } from '../../src/example/audit/request-context';
import { AppModule } from '../../src/example/app.module';
import { DEMO_PASSWORD, demoTestSettings, seedDemo } from '../harness/demo-data';
import { describeWithChromium, launchChromium } from './console-browser';
import { createObject } from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';

const API_KEY = 'console-e2e-operator-key';
/** CONSOLE_SCREENSHOTS=1 refreshes the pictures in docs/images (kept out of normal runs). */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const IMAGES = join(__dirname, '..', '..', 'docs', 'images');
/** Markup in a row the signed-in user may read: it must show as text, never run. */
const HOSTILE_SUBJECT = '<img src=x onerror="window.__consoleXss=1">Printer on fire';

const describeWithBrowser = describeWithChromium('console e2e');

/**
 * The demo's /console in headless Debian chromium driven by playwright-core: the demo app (its
 * guard, agentFactory and audit context) on the real Parse Server and PostgreSQL.
 */
describeWithBrowser('console in a real browser (demo app, chromium)', () => {
  let app: INestApplication;
  let base: string;
  let browser: Browser;
  let tokens: { alice: string; bob: string };
  const savedGates: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // carol (a demo writer) gets the admin tier when the operator switched writes and schema
    // operations on; her admin method then asks for a confirmation.
    for (const gate of [ENV_GATES.writeTools, ENV_GATES.schemaOps]) {
      savedGates[gate] = process.env[gate];
      process.env[gate] = 'true';
    }
    tokens = await seedDemo();
    await createObject('SupportTicket', {
      tenantId: 'acme',
      subject: HOSTILE_SUBJECT,
      status: 'open',
      priority: 'high',
    });
    const cfg = testParseConfig();
    const module = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          settings: demoTestSettings(),
          parseServerURL: cfg.serverURL,
          mcpApiKey: API_KEY,
          postgresURI: cfg.databaseURI,
        }),
      ],
    }).compile();
    // As main.ts does: the request context (who made a call, for the activity feed) comes first.
    const server = express();
    server.use(requestContextMiddleware);
    app = module.createNestApplication(new ExpressAdapter(server), { logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
    if (SCREENSHOTS) mkdirSync(IMAGES, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    for (const [gate, value] of Object.entries(savedGates)) {
      if (value === undefined) delete process.env[gate];
      else process.env[gate] = value;
    }
  });

  async function openConsole(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    await page.goto(`${base}/console`);
    return page;
  }

  async function signIn(page: Page, username: string): Promise<void> {
    await page.getByTestId('login-username').fill(username);
    await page.getByTestId('login-password').fill(DEMO_PASSWORD);
    await page.getByTestId('login-submit').click();
    await expectText(page.getByTestId('whoami'), `Agent acts for ${username}`);
  }

  async function signInOperator(page: Page): Promise<void> {
    await page.getByTestId('login-key').fill(API_KEY);
    await page.getByTestId('login-key-submit').click();
    await expectText(page.getByTestId('whoami'), 'Agent acts for operator');
  }

  async function runTool(page: Page, tool: string, args: Record<string, unknown>) {
    await page.getByTestId('tab-try').click();
    await page.getByTestId('tool-select').selectOption(tool);
    await page.getByTestId('tool-args').fill(JSON.stringify(args));
    await page.getByTestId('tool-run').click();
    const result = page.getByTestId('tool-result');
    await result.getByTestId('result-json').waitFor({ state: 'attached' });
    return result;
  }

  /** Polls a condition the page reaches asynchronously (15 s at most). */
  async function until(condition: () => Promise<boolean>) {
    const deadline = Date.now() + 15_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not reached within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A picture of one panel for docs/console.md (small: the panel, not the whole page). */
  async function shoot(page: Page, panel: string, file: string) {
    await page.locator(`#${panel}`).screenshot({ path: join(IMAGES, file) });
  }

  async function expectText(locator: ReturnType<Page['getByTestId']>, wanted: string) {
    await locator.filter({ hasText: wanted }).first().waitFor({ timeout: 15_000 });
  }

  it('alice signs in: her agent acts for her, readonly, in tenant acme', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    const missing: string[] = [];
    page.on('response', (res) => {
      if (res.status() === 404) missing.push(res.url());
    });
    await page.goto(`${base}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/');
    // The page carries its icon: the browser asks the host for no /favicon.ico.
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg/);
    await signIn(page, 'alice');
    // The username box is cleared once she is signed in (and the password box too).
    expect(await page.getByTestId('login-username').inputValue()).toBe('');
    expect(await page.getByTestId('login-password').inputValue()).toBe('');
    expect(missing).toEqual([]);
    const card = page.getByTestId('identity-card').first();
    expect(await card.getByTestId('identity-tier').textContent()).toBe('readonly');
    expect(await card.getByTestId('identity-tenant').textContent()).toBe('acme');
    // Signing out forgets her in the page (and ends her Parse session).
    await card.getByTestId('identity-remove').click();
    await expectText(page.getByTestId('whoami'), 'Not signed in');
    expect(await page.getByTestId('identity-card').count()).toBe(0);
    expect(await page.getByTestId('login-error').textContent()).toBe('');
    await page.context().close();
  }, 60_000);

  it('a wrong password is refused with a plain message and no identity', async () => {
    const page = await openConsole();
    await page.getByTestId('login-username').fill('alice');
    await page.getByTestId('login-password').fill('not-her-password');
    await page.getByTestId('login-submit').click();
    await expectText(page.getByTestId('login-error'), 'Wrong username or password');
    expect(await page.getByTestId('identity-card').count()).toBe(0);
    await page.context().close();
  }, 60_000);

  it("alice counts 1,470 orders, reads pages of acme rows only, and sees globex's nowhere", async () => {
    const page = await openConsole();
    await signIn(page, 'alice');
    expect(await page.getByTestId('tool-select').locator('option').allTextContents()).toContain(
      'count_objects',
    );

    let result = await runTool(page, 'count_objects', { class_name: 'Order' });
    expect(await result.getByTestId('result-count').textContent()).toBe('1,470');

    result = await runTool(page, 'query_class', {
      class_name: 'Order',
      keys: ['tenantId', 'status'],
      limit: 25,
    });
    const rows = result.getByTestId('result-row');
    expect(await rows.count()).toBe(25);
    const firstPage = await result.getByTestId('result-table').textContent();
    expect(firstPage).toContain('acme');
    expect(firstPage).not.toContain('globex');
    // Paging: the next page is new rows, still acme's only.
    await result.getByTestId('result-next').click();
    await expectText(page.getByTestId('result-pager'), 'rows 26–50');
    const secondPage = await page.getByTestId('result-table').textContent();
    expect(secondPage).not.toContain('globex');
    expect(secondPage).not.toBe(firstPage);

    // Asking for globex's rows by name gets the agent's error, and no row.
    result = await runTool(page, 'query_class', {
      class_name: 'Order',
      where: { tenantId: 'globex' },
    });
    expect(await result.getByTestId('result-row').count()).toBe(0);
    expect(await result.getByTestId('tool-error').count()).toBe(1);
    expect(await result.getByTestId('result-table').count()).toBe(0);

    // group_by as a chart: one bar, acme, 1,470.
    result = await runTool(page, 'group_by', { class_name: 'Order', field: 'tenantId' });
    const chart = result.getByTestId('result-chart');
    expect(await chart.locator('rect').count()).toBe(1);
    expect(await chart.textContent()).toContain('acme');
    expect(await chart.textContent()).toContain('1,470');
    expect(await chart.textContent()).not.toContain('globex');

    // The form generated from the input schema: group_by_date per month, filled field by field.
    await page.getByTestId('tool-select').selectOption('group_by_date');
    await page.getByTestId('arg-class_name').fill('Order');
    await page.getByTestId('arg-field').fill('placedAt');
    await page.getByTestId('arg-interval').selectOption({ label: 'month' });
    expect(JSON.parse(await page.getByTestId('tool-args').inputValue())).toEqual({
      class_name: 'Order',
      field: 'placedAt',
      interval: 'month',
    });
    await page.getByTestId('tool-run').click();
    const months = page.getByTestId('tool-result').getByTestId('result-chart');
    await months.waitFor();
    expect(await months.locator('rect').count()).toBeGreaterThan(1);
    // Every one of her orders falls in some month: the buckets add up to her count.
    const perMonth = await page
      .getByTestId('tool-result')
      .getByTestId('result-row')
      .evaluateAll((rows) => rows.map((r) => Number(r.children[1]?.textContent)));
    expect(perMonth.reduce((a, b) => a + b, 0)).toBe(1470);
    expect(await page.getByTestId('tool-result').getByTestId('tool-error').count()).toBe(0);
    if (SCREENSHOTS) await shoot(page, 'tab-try', 'console-try-it.png');
    await page.context().close();
  }, 90_000);

  it('shows row text as text: markup in a row is neither parsed nor run', async () => {
    const page = await openConsole();
    await signIn(page, 'alice');
    const result = await runTool(page, 'query_class', {
      class_name: 'SupportTicket',
      where: { priority: 'high', status: 'open' },
      keys: ['subject'],
    });
    await expectText(result.getByTestId('result-table'), 'Printer on fire');
    expect(await result.getByTestId('result-table').textContent()).toContain('<img src=x');
    expect(await page.locator('#tool-result img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __consoleXss?: number }).__consoleXss)).toBe(
      undefined,
    );
    await page.context().close();
  }, 60_000);

  it('puts alice and bob side by side: each tenant scope, no globex for alice', async () => {
    const page = await openConsole();
    await signIn(page, 'alice');
    await signIn(page, 'bob');
    // Make alice active again and compare her with bob.
    await page.getByTestId('identity-use').first().click();
    await expectText(page.getByTestId('whoami'), 'Agent acts for alice');
    await page.getByTestId('policy-compare').selectOption({ label: 'bob' });
    const columns = page.getByTestId('policy-column');
    await expectText(columns.nth(1), 'bob (readonly, tenant globex)');
    const order = (column: number) =>
      columns.nth(column).locator('[data-testid="policy-class"][data-class="Order"]');
    await order(0).locator('summary').click();
    await order(1).locator('summary').click();
    expect(await order(0).getByTestId('tenant-scope').textContent()).toBe('tenantId = acme');
    expect(await order(1).getByTestId('tenant-scope').textContent()).toBe('tenantId = globex');
    // Withheld and why: Parse's protectedFields hide Customer's email from non-admins; phone is
    // outside the allowlist, which a user learns only as a count.
    const customer = columns.nth(0).locator('[data-testid="policy-class"][data-class="Customer"]');
    await customer.locator('summary').click();
    const withheld = await customer.getByTestId('fields-withheld').textContent();
    expect(withheld).toContain("email (Parse's protectedFields)");
    expect(withheld).toContain('3 outside the allowlist');
    expect(withheld).not.toContain('phone');
    expect(await customer.getByTestId('fields-given').textContent()).not.toMatch(/email|phone/);
    expect(await columns.nth(0).textContent()).not.toContain('globex');
    // A user is shown no class their agent cannot reach (the hidden ApiCredential).
    expect(await columns.nth(0).textContent()).not.toContain('ApiCredential');
    // Tools: allowed or not, with the reason (readonly users get no write tools).
    const createRow = columns.nth(0).locator('tr[data-tool="create_object"]');
    expect(await createRow.textContent()).toContain('permission_denied');
    const allowed = await columns.nth(0).getByTestId('policy-tools-allowed').textContent();
    expect(allowed).toContain('count_objects');
    expect(allowed).not.toContain('create_object');
    if (SCREENSHOTS) await shoot(page, 'tab-policy', 'console-policy.png');
    await page.context().close();
  }, 60_000);

  it("keeps a write method's confirmation: nothing changes until carol confirms the agent's question", async () => {
    const { results } = await parseRest<{ results: Array<{ objectId: string; name: string }> }>(
      'GET',
      `/classes/Customer?where=${encodeURIComponent(JSON.stringify({ tenantId: 'acme' }))}&limit=1`,
      undefined,
      { masterKey: true },
    );
    const customer = results[0];
    const nameNow = async () =>
      (
        await parseRest<{ name: string }>(
          'GET',
          `/classes/Customer/${customer.objectId}`,
          undefined,
          {
            masterKey: true,
          },
        )
      ).name;
    const page = await openConsole();
    await signIn(page, 'carol');
    expect(await page.getByTestId('identity-tier').first().textContent()).toBe('admin');
    const args = { class_name: 'Customer', object_id: customer.objectId, method_name: 'anonymize' };
    await page.getByTestId('tab-try').click();
    await page.getByTestId('tool-select').selectOption('call_method');
    await page.getByTestId('tool-args').fill(JSON.stringify(args));
    await page.getByTestId('tool-run').click();
    const question = page.getByTestId('tool-confirmation');
    await question.waitFor();
    expect(await question.textContent()).toContain('anonymize');
    // Asked, not yet run: the customer is untouched.
    expect(await nameNow()).toBe(customer.name);

    await page.getByTestId('tool-confirm').click();
    await page.getByTestId('tool-result').getByTestId('result-summary').waitFor();
    expect(await page.getByTestId('result-json').textContent()).toContain('"anonymized"');
    expect(await nameNow()).toBe('Anonymized customer');
    await page.context().close();
  }, 60_000);

  it("the operator's live activity feed shows alice's call with her identity, tool and outcome", async () => {
    const operator = await openConsole();
    await signInOperator(operator);
    await operator.getByTestId('tab-activity').click();
    await expectText(operator.getByTestId('activity-status'), 'Live');

    const alice = await openConsole();
    await signIn(alice, 'alice');
    // The feed opens with recent history (earlier tests' calls); her next call must arrive live.
    const hers = operator
      .getByTestId('activity-row')
      .filter({ hasText: 'alice (acme)' })
      .filter({ hasText: 'count_objects' });
    const before = await hers.count();
    await runTool(alice, 'count_objects', { class_name: 'Customer' });
    await until(async () => (await hers.count()) > before);
    // Newest first: the top row is her call.
    const row = operator.getByTestId('activity-row').first();
    expect(await row.getByTestId('activity-outcome').textContent()).toBe('ok');
    expect(await row.getByTestId('activity-actor').textContent()).toBe('alice (acme)');
    if (SCREENSHOTS) await shoot(operator, 'tab-activity', 'console-activity.png');

    // carol's confirmed change (the previous test) is on the feed as a mutation, names only.
    const change = operator.getByTestId('activity-row').filter({ hasText: 'Customer.anonymize' });
    const carolChange = change.filter({ hasText: 'carol (acme)' }).filter({ hasText: 'changed' });
    expect(await carolChange.count()).toBe(1);
    expect(await carolChange.getByTestId('activity-tool').textContent()).toMatch(/email/);

    // Her own page shows no feed: it is the operator's.
    await alice.getByTestId('tab-activity').click();
    expect(await alice.getByTestId('activity-status').textContent()).toContain('for the operator');
    expect(await alice.getByTestId('activity-row').count()).toBe(0);
    await alice.context().close();
    await operator.context().close();
  }, 90_000);

  it('refuses the activity feed to users (403) and every data endpoint without credentials (401)', async () => {
    const http = request(app.getHttpServer());
    await http
      .get('/console/api/activity')
      .set('Authorization', `Bearer ${tokens.alice}`)
      .expect(403);
    await http
      .get('/console/api/activity')
      .set('Authorization', `Bearer ${tokens.bob}`)
      .expect(403);
    for (const path of ['identity', 'policy', 'tools', 'activity'])
      await http.get(`/console/api/${path}`).expect(401);
    await http.post('/console/api/tools/count_objects').send({ arguments: {} }).expect(401);
    await http.get('/console/api/activity').set('X-MCP-API-Key', 'wrong-key').expect(401);
    // Sign-in and sign-out go through Parse: the session signed out is over at Parse Server.
    const signed = await http
      .post('/console/api/sign-in')
      .send({ username: 'bob', password: DEMO_PASSWORD })
      .expect(200);
    const token = signed.body.session_token as string;
    await http.get('/console/api/identity').set('Authorization', `Bearer ${token}`).expect(200);
    await http.post('/console/api/sign-out').set('Authorization', `Bearer ${token}`).expect(204);
    await expect(
      parseRest('GET', '/users/me', undefined, { sessionToken: token }),
    ).rejects.toMatchObject({ code: 209 });
    await http.post('/console/api/sign-in').send({ username: 'bob' }).expect(400);
    // The page itself carries no data and is served to anyone, with a strict CSP.
    const page = await http.get('/console/').expect(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });
});
