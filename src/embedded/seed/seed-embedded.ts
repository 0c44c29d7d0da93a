import type { INestApplicationContext, Logger } from '@nestjs/common';
import { SearchIndexer } from 'nestjs-parse-agent';
import { seedDemoData } from './demo-seeder';
import { ParseAdminClient } from './parse-admin-client';
import { PostgresRowWriter } from './postgres-row-writer';

export interface EmbeddedSeedTarget {
  /** Where the embedded Parse Server answers (its /parse mount on the listening demo). */
  parseServerURL: string;
  appId: string;
  masterKey: string;
  /** Parse's own PostgreSQL database: the demo classes' rows go straight into it. */
  postgresURI: string;
  demoPassword: string;
}

/**
 * Seeds the embedded demo (once; a restart keeps the data) and proves a user can log in: the
 * embedded demo is ready only then. `checkpoint` runs between the two, where a signal received
 * meanwhile stops start-up.
 */
export async function seedEmbeddedDemo(
  target: EmbeddedSeedTarget,
  logger: Logger,
  checkpoint: () => void,
): Promise<void> {
  const admin = new ParseAdminClient(target.parseServerURL, target.appId, target.masterKey);
  // Rows straight into Parse's own database: one INSERT per class, not a Parse write per row.
  const rows = new PostgresRowWriter(target.postgresURI);
  const report = await seedDemoData(admin, target.demoPassword, { rows }).finally(() =>
    rows.close(),
  );
  checkpoint();
  logger.log(
    `${report.seeded ? 'Seeded' : 'Kept'} demo data: ${Object.entries(report.counts)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  // Ready means a user can log in: prove it with one demo login.
  await admin.request('POST', '/login', { username: 'alice', password: target.demoPassword });
}

/** The demo's searchable classes (their models carry @AgentSearchable). */
const SEARCHABLE_DEMO_CLASSES = ['SupportTicket', 'Product'] as const;

/**
 * Embeds the demo's ticket bodies and product spec sheets with the app's indexer (the local
 * lexical embedder): on every start, but a row whose text did not change costs nothing.
 */
export async function indexDemoSearch(
  app: INestApplicationContext,
  target: Pick<EmbeddedSeedTarget, 'parseServerURL' | 'appId' | 'masterKey'>,
  logger: Logger,
): Promise<void> {
  const indexer = app.get(SearchIndexer, { strict: false }) as SearchIndexer | null;
  if (!indexer) return;
  const admin = new ParseAdminClient(target.parseServerURL, target.appId, target.masterKey);
  const parts: string[] = [];
  for (const className of SEARCHABLE_DEMO_CLASSES) {
    const rows = await admin.find(className, {}, 10_000);
    const outcome = await indexer.indexRows(className, rows as Array<{ objectId: string }>);
    parts.push(`${className}=${outcome.embedded} embedded/${outcome.unchanged} unchanged`);
  }
  logger.log(`semantic_search index: ${parts.join(' ')} (${indexer.embeddings.model})`);
}
