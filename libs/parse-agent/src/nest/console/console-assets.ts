import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The page's files ship as they are (no build step) in the package's `console/` folder, three
 * levels above this file both in `src/nest/console` and in `dist/nest/console`. A build that
 * compiles the library into an app's own output (a Nest monorepo's `nest build`) leaves them
 * behind: then the package's folder, found by its name, holds them. Read once.
 */
let assetDir: string | undefined;
const cache = new Map<string, Buffer>();

function consoleAssetDir(): string {
  if (assetDir) return assetDir;
  const beside = join(__dirname, '..', '..', '..', 'console');
  assetDir = existsSync(join(beside, 'index.html'))
    ? beside
    : join(dirname(require.resolve('nestjs-parse-agent/package.json')), 'console');
  return assetDir;
}

export type ConsoleAssetName = 'index.html' | 'console.js' | 'console-live.js';

export function consoleAsset(name: ConsoleAssetName): Buffer {
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(join(consoleAssetDir(), name));
    cache.set(name, body);
  }
  return body;
}
