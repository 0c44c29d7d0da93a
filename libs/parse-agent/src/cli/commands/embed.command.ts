import type { Command } from 'commander';
import { join } from 'node:path';
import { embeddingsFromEnv } from '../../client/embeddings/embeddings-from-env';
import { createOpenAiCompatibleEmbeddings } from '../../client/embeddings/openai-compatible-embeddings';
import { backfill, progressLine } from '../embed-backfill';
import type { CliCommand } from '../cli-command';
import { CliUsageError } from '../cli-settings';

interface EmbedOptions {
  batchSize: string;
  rate: string;
  checkpoint?: string;
  restart?: boolean;
}

function positive(name: string, value: string, allowZero = false): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || !Number.isInteger(n)) {
    throw new CliUsageError(
      `--${name} must be a whole number${allowZero ? ' (0: no limit)' : ' above 0'}; got '${value}'.`,
    );
  }
  return n;
}

/** `parse-agent embed <Class>`: backfills the chunk vectors of an @AgentSearchable class. */
export const embedCommand: CliCommand = (program, cli) => {
  program
    .command('embed')
    .description('embed the text fields of an @AgentSearchable class (batched, resumable)')
    .argument('<class>', 'the Parse class, e.g. SupportTicket')
    .option('--batch-size <n>', 'rows per batch', '100')
    .option('--rate <n>', 'at most n batches per second (0: no limit)', '0')
    .option(
      '--checkpoint <file>',
      'where progress is kept (default .parse-agent-embed-<Class>.json)',
    )
    .option('--restart', 'ignore the checkpoint and start from the first row')
    .addHelpText(
      'after',
      `
Needs the master key, --models with the class's model and POSTGRES_URI (the side table lives in
Parse's PostgreSQL database). Embeddings: EMBEDDINGS_PROVIDER=local (default, lexical) or
openai-compatible with EMBEDDINGS_MODEL, EMBEDDINGS_DIMENSIONS, EMBEDDINGS_BASE_URL, EMBEDDINGS_API_KEY.
Progress goes to stderr; the summary (rows, chunks, calls, tokens, cost) to stdout as JSON.

Examples:
  $ parse-agent --models dist/models.js embed SupportTicket
  $ parse-agent --models dist/models.js embed Product --batch-size 50 --rate 2`,
    )
    .action(async (className: string, options: EmbedOptions, command: Command) => {
      const batchSize = positive('batch-size', options.batchSize);
      const rate = positive('rate', options.rate, true);
      const settings = await cli.settingsOf(command);
      const embeddings = embeddingsFromEnv(settings.env, createOpenAiCompatibleEmbeddings);
      await cli.withSession({ ...settings, embeddings }, async (session) => {
        if (!session.agent.usingMasterKey) {
          throw new CliUsageError(
            'embed reads every row of the class and writes the side table: run it with the master key (no session token).',
          );
        }
        if (!session.indexer) {
          throw new CliUsageError(
            "embed stores vectors in Parse's PostgreSQL database: set POSTGRES_URI (or --postgres-uri).",
          );
        }
        const indexer = session.indexer;
        try {
          indexer.declaration(className);
        } catch (error) {
          throw new CliUsageError((error as Error).message);
        }
        const tty = (cli.deps.stderr as { isTTY?: boolean } | undefined)?.isTTY === true;
        const stderr = cli.deps.stderr ?? process.stderr;
        const summary = await backfill(
          indexer,
          session.services.data.pathFor('find', session.agent),
          {
            className,
            batchSize,
            rate,
            checkpointFile:
              options.checkpoint ?? join(process.cwd(), `.parse-agent-embed-${className}.json`),
            restart: options.restart,
            onProgress: (p) => {
              if (tty) stderr.write(`\r${progressLine(p)}`);
              else cli.log(progressLine(p));
            },
          },
        );
        if (tty) stderr.write('\n');
        if (summary.resumedFrom) cli.log(`resumed after objectId ${summary.resumedFrom}`);
        cli.printJson({
          class_name: className,
          model: indexer.embeddings.model,
          dimensions: indexer.embeddings.dimensions,
          rows: summary.rows,
          total: summary.total,
          embedded: summary.embedded,
          unchanged: summary.unchanged,
          chunks: summary.chunks,
          capped: summary.capped,
          embedding_calls: summary.calls,
          embedding_tokens: summary.tokens,
          ...(summary.costUsd !== undefined
            ? { cost_usd: Number(summary.costUsd.toFixed(6)) }
            : {}),
          seconds: Number(summary.seconds.toFixed(2)),
          rows_per_second:
            summary.seconds > 0 ? Math.round(summary.rows / summary.seconds) : summary.rows,
          ...(summary.resumedFrom ? { resumed_after: summary.resumedFrom } : {}),
        });
      });
    });
};
