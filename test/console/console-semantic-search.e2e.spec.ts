import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import express from 'express';
import { SearchIndexer } from 'nestjs-parse-agent';
import type { Browser, Page } from 'playwright-core';
import { requestContextMiddleware } from '../../src/example/audit/request-context';
import { AppModule } from '../../src/example/app.module';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { describeWithChromium, launchChromium, openConsolePage, signInAs } from './console-browser';
import type { Data } from '../harness/envelopes';
import { createObject } from '../harness/fixtures';
import { findRows, testParseConfig } from '../harness/parse-rest';

const API_KEY = 'console-semantic-operator-key';
/** In every ticket added here; only the acme ones readable by alice may come back to her. */
const MARKER = 'lanternmarker';
const GLOBEX_WORD = 'globexmarker';
const ADMIN_WORD = 'adminmarker';

const describeWithBrowser = describeWithChromium('console semantic_search e2e');

/**
 * semantic_search from the console's tool runner in headless chromium: the demo app (its
 * @AgentSearchable SupportTicket and Product, exact scan on the real PostgreSQL) with every
 * ticket of both tenants embedded, as the embedded demo does after seeding.
 */
describeWithBrowser('console runs semantic_search (demo app, chromium)', () => {
  let app: INestApplication;
  let base: string;
  let browser: Browser;
  /** Tickets alice must never see: globex's (tenant scope) and acme's admin-only (row ACL). */
  const forbidden = new Set<string>();
  const aliceMarked: string[] = [];
  const adminMarked: string[] = [];

  beforeAll(async () => {
    await seedDemo();
    const ticket = (tenantId: string, n: number, words: string) => ({
      tenantId,
      subject: `Lantern ${n}: ${MARKER} ${words}`,
      body: `The ${MARKER} stops after an hour ${words}. Customer asks about the ${MARKER} refill.`,
      status: 'open',
      priority: 'high',
    });
    for (let n = 1; n <= 3; n++) {
      aliceMarked.push(await createObject('SupportTicket', ticket('acme', n, 'camping')));
      // Public by ACL: only the tenant scope keeps these from alice.
      await createObject('SupportTicket', ticket('globex', n, GLOBEX_WORD), {
        '*': { read: true },
      });
      adminMarked.push(
        await createObject('SupportTicket', ticket('acme', n, ADMIN_WORD), {
          'role:admin': { read: true },
        }),
      );
    }
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
    const tickets = await findRows('SupportTicket', {}, { masterKey: true }, { limit: '5000' });
    for (const row of tickets) {
      const readers = Object.keys((row.ACL as Record<string, unknown>) ?? {});
      const adminOnly = readers.length > 0 && readers.every((r) => r === 'role:admin');
      if (row.tenantId === 'globex' || adminOnly) forbidden.add(String(row.objectId));
    }
    // The leak check below can fail only if both kinds are there to leak.
    expect(tickets.some((r) => r.tenantId === 'globex')).toBe(true);
    expect(adminMarked.every((id) => forbidden.has(id))).toBe(true);
    const indexer = module.get(SearchIndexer);
    await indexer.indexRows('SupportTicket', tickets as Array<{ objectId: string }>);
    const server = express();
    server.use(requestContextMiddleware);
    app = module.createNestApplication(new ExpressAdapter(server), { logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function signedIn(username: string): Promise<Page> {
    const page = await openConsolePage(browser, base);
    await signInAs(page, username);
    await page.getByTestId('tab-try').click();
    return page;
  }

  /** Runs the tool with what is in the JSON box; the envelope's data and the passages table. */
  async function runAndRead(page: Page) {
    await page.getByTestId('tool-run').click();
    const result = page.getByTestId('tool-result');
    await result.getByTestId('result-json').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await result.getByTestId('tool-error').count()).toBe(0);
    const envelope = JSON.parse((await result.getByTestId('result-json').textContent()) ?? '');
    const table = result.getByTestId('result-table');
    return { data: envelope.data as Data, table, text: (await table.textContent()) ?? '' };
  }

  /** The envelope's chunks and rows, the echoed query left out (it names the markers). */
  const leaked = (data: Data) => JSON.stringify({ ...data, query: undefined });

  it("alice fills semantic_search's form and sees acme passages only, never a globex or admin-only ticket", async () => {
    const page = await signedIn('alice');
    const offered = await page.getByTestId('tool-select').locator('option').allTextContents();
    expect(offered).toContain('semantic_search');
    // The form generated from the tool's input schema, filled field by field.
    await page.getByTestId('tool-select').selectOption('semantic_search');
    await page.getByTestId('arg-class_name').fill('SupportTicket');
    await page.getByTestId('arg-query').fill(`${MARKER} ${GLOBEX_WORD} ${ADMIN_WORD} refill`);
    await page.getByTestId('arg-k').fill('20');
    expect(JSON.parse(await page.getByTestId('tool-args').inputValue())).toEqual({
      class_name: 'SupportTicket',
      query: `${MARKER} ${GLOBEX_WORD} ${ADMIN_WORD} refill`,
      k: 20,
    });
    const { data, table, text } = await runAndRead(page);

    expect(data.method).toBe('exact');
    expect(data.scores).toBe('quantized');
    const ids = (data.chunks as Data[]).map((c) => String(c.object_id));
    // Her three marked tickets rank first: they share the most words with the query.
    expect(new Set(ids.slice(0, 3))).toEqual(new Set(aliceMarked));
    for (const id of ids) expect(forbidden.has(id)).toBe(false);
    for (const doc of Object.values(data.documents as Record<string, Data>)) {
      expect(doc.tenantId).toBe('acme');
    }
    expect(leaked(data)).not.toContain(GLOBEX_WORD);
    expect(leaked(data)).not.toContain(ADMIN_WORD);
    // The page shows them: one table row per passage, best first, with the row's tenant.
    expect(await page.getByTestId('result-count').textContent()).toBe(String(ids.length));
    expect(await table.getByTestId('result-row').count()).toBe(ids.length);
    expect(await table.getByTestId('result-row').first().textContent()).toContain(MARKER);
    expect(text).toContain('acme');
    expect(text).not.toContain('globex');
    expect(text).not.toContain(ADMIN_WORD);
    for (const id of forbidden) expect(text).not.toContain(id);

    // A broad query over the demo's own tickets (every fifth is admin-only, half are globex's),
    // narrowed by a filter field, through the JSON box.
    await page.getByTestId('tool-args').fill(
      JSON.stringify({
        class_name: 'SupportTicket',
        query: 'damaged item late delivery billing question return request order',
        k: 50,
        where: { status: { $in: ['open', 'pending'] } },
      }),
    );
    const broad = await runAndRead(page);
    const broadIds = (broad.data.chunks as Data[]).map((c) => String(c.object_id));
    expect(broadIds.length).toBeGreaterThan(10);
    for (const id of broadIds) expect(forbidden.has(id)).toBe(false);
    for (const doc of Object.values(broad.data.documents as Record<string, Data>)) {
      expect(doc.tenantId).toBe('acme');
      expect(['open', 'pending']).toContain(doc.status);
    }
    expect(broad.text).not.toContain('globex');
    await page.context().close();
  }, 90_000);

  it('carol, an admin of acme, finds the admin-only tickets the same way (the check above can fail)', async () => {
    const page = await signedIn('carol');
    await page.getByTestId('tool-select').selectOption('semantic_search');
    await page
      .getByTestId('tool-args')
      .fill(
        JSON.stringify({ class_name: 'SupportTicket', query: `${MARKER} ${ADMIN_WORD}`, k: 20 }),
      );
    const { data, text } = await runAndRead(page);
    const ids = (data.chunks as Data[]).map((c) => String(c.object_id));
    expect(ids.some((id) => adminMarked.includes(id))).toBe(true);
    expect(text).toContain(ADMIN_WORD);
    // Still her tenant only.
    expect(text).not.toContain('globex');
    await page.context().close();
  }, 60_000);
});
