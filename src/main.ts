import 'reflect-metadata';
import { DemoConfigError } from './embedded/demo-config';
import { DemoHost } from './embedded/demo-host';
import { describeError } from './embedded/describe-error';

/**
 * `npm start`: the example app (src/example) served by the embedded default (src/embedded):
 * PostgreSQL, Parse Server and seeded demo data in this process, or an existing Parse Server when
 * PARSE_SERVER_URL, PARSE_APP_ID and PARSE_MASTER_KEY are set. See docs/quick-start.md.
 */
new DemoHost().run().catch((error: unknown) => {
  if (error instanceof DemoConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${describeError(error)}\n`);
  }
  process.exit(1);
});
