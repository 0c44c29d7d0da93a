import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedSettings } from '../../src/embedded/demo-config';
import { DemoHost } from '../../src/embedded/demo-host';

/** Ends the run where the host would create the example app. */
class StoppedBeforeTheApp extends Error {}

/**
 * The demo host as `npm start` runs it, up to the moment it creates the example app (where the
 * library's module boots and may read the schemas at once): prints Parse Server's classes as they
 * are then, as one `SCHEMAS <json>` line, and stops the way a failed start does (Parse Server,
 * PostgreSQL and the DATA_DIR lock released). Started by test/demo/demo-schemas-at-start.e2e.spec.ts.
 */
class DemoHostBeforeTheApp extends DemoHost {
  protected override async startEmbedded(settings: EmbeddedSettings) {
    const application = await super.startEmbedded(settings);
    return { ...application, createExampleApp: () => this.printSchemas(settings) };
  }

  private async printSchemas(settings: EmbeddedSettings): Promise<never> {
    // Only the host's own server (Parse Server at /parse), on a port of its own for this read.
    const http = createServer(this.server);
    await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
    try {
      const { port } = http.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/parse/schemas`, {
        headers: {
          'X-Parse-Application-Id': settings.appId,
          'X-Parse-Master-Key': settings.masterKey,
        },
      });
      process.stdout.write(`SCHEMAS ${JSON.stringify(await response.json())}\n`);
    } finally {
      http.closeAllConnections();
      await new Promise((closed) => http.close(closed));
    }
    throw new StoppedBeforeTheApp();
  }
}

new DemoHostBeforeTheApp().run().then(
  () => process.exit(1),
  (error: unknown) => {
    if (!(error instanceof StoppedBeforeTheApp)) process.stderr.write(`${String(error)}\n`);
    process.exit(error instanceof StoppedBeforeTheApp ? 0 : 1);
  },
);
