import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { DataPath, DataRow } from '../ports/data-path';
import type { IndexOutcome, SearchIndexer } from '../retrieval/search-indexer';

export interface BackfillOptions {
  className: string;
  /** Rows read and embedded per step. */
  batchSize: number;
  /** Most batches per second (0: no limit). */
  rate: number;
  /** Where progress is kept between runs; absent: not resumable. */
  checkpointFile?: string;
  /** Ignore a checkpoint and start from the first row. */
  restart?: boolean;
  signal?: AbortSignal;
  /** Called after every batch. */
  onProgress?(progress: BackfillProgress): void;
}

export interface BackfillProgress extends IndexOutcome {
  total: number;
  /** The last objectId done (rows are walked in objectId order). */
  cursor?: string;
  seconds: number;
}

interface Checkpoint {
  className: string;
  model: string;
  cursor: string;
  done: IndexOutcome;
}

const EMPTY: IndexOutcome = {
  rows: 0,
  embedded: 0,
  unchanged: 0,
  chunks: 0,
  capped: 0,
  calls: 0,
  tokens: 0,
};

/**
 * Embeds every row of a searchable class, walking it in objectId order in batches, at most `rate`
 * batches a second, writing a checkpoint after each batch so an interrupted run resumes where it
 * stopped. Rows whose text did not change since they were embedded cost nothing (their hash is
 * compared first), so a rerun from the start is cheap too.
 */
export async function backfill(
  indexer: SearchIndexer,
  rows: DataPath,
  options: BackfillOptions,
): Promise<BackfillProgress & { resumedFrom?: string }> {
  const { className, batchSize } = options;
  const { searchable } = indexer.declaration(className);
  const started = Date.now();
  let done: IndexOutcome = { ...EMPTY };
  let cursor: string | undefined;
  let resumedFrom: string | undefined;
  const file = options.checkpointFile;
  if (file && !options.restart && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<Checkpoint>;
    if (saved.className === className && saved.model === indexer.embeddings.model && saved.cursor) {
      cursor = resumedFrom = saved.cursor;
      done = { ...EMPTY, ...saved.done };
    }
  }
  // A trivially true constraint: Parse on PostgreSQL answers an empty one with an estimate.
  const total = await rows.count(className, { objectId: { $exists: true } }, options.signal);
  let last = 0;
  const keys = ['objectId', ...searchable.fields];
  for (;;) {
    options.signal?.throwIfAborted();
    if (options.rate > 0) {
      const wait = last + 1000 / options.rate - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    last = Date.now();
    const where = cursor ? { objectId: { $gt: cursor } } : { objectId: { $exists: true } };
    const batch: DataRow[] = await rows.find(
      className,
      { where, keys, order: 'objectId', limit: batchSize },
      options.signal,
    );
    if (!batch.length) break;
    const outcome = await indexer.indexRows(className, batch as Array<{ objectId: string }>, {
      signal: options.signal,
    });
    done = add(done, outcome);
    cursor = String(batch[batch.length - 1].objectId);
    if (file) {
      const checkpoint: Checkpoint = { className, model: indexer.embeddings.model, cursor, done };
      writeFileSync(file, JSON.stringify(checkpoint));
    }
    options.onProgress?.({ ...done, total, cursor, seconds: (Date.now() - started) / 1000 });
    if (batch.length < batchSize) break;
  }
  if (file && existsSync(file)) rmSync(file);
  return {
    ...done,
    total,
    cursor,
    seconds: (Date.now() - started) / 1000,
    ...(resumedFrom ? { resumedFrom } : {}),
  };
}

function add(a: IndexOutcome, b: IndexOutcome): IndexOutcome {
  const out: IndexOutcome = {
    rows: a.rows + b.rows,
    embedded: a.embedded + b.embedded,
    unchanged: a.unchanged + b.unchanged,
    chunks: a.chunks + b.chunks,
    capped: a.capped + b.capped,
    calls: a.calls + b.calls,
    tokens: a.tokens + b.tokens,
  };
  if (a.costUsd !== undefined || b.costUsd !== undefined) {
    out.costUsd = (a.costUsd ?? 0) + (b.costUsd ?? 0);
  }
  return out;
}

/** A progress bar line: `[#####.....] 120/500 rows, 80 embedded, 40 unchanged, 31 rows/s`. */
export function progressLine(p: BackfillProgress, width = 24): string {
  const ratio = p.total > 0 ? Math.min(1, p.rows / p.total) : 1;
  const filled = Math.round(ratio * width);
  const rate = p.seconds > 0 ? Math.round(p.rows / p.seconds) : p.rows;
  return (
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.rows}/${p.total} rows, ` +
    `${p.embedded} embedded, ${p.unchanged} unchanged, ${p.chunks} chunks, ${rate} rows/s`
  );
}
