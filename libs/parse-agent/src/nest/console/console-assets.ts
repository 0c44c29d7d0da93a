import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The page's files ship as they are (no build step) in the package's `console/` folder, three
 * levels above this file both in `src/nest/console` and in `dist/nest/console`. Read once.
 */
const ASSET_DIR = join(__dirname, '..', '..', '..', 'console');
const cache = new Map<string, Buffer>();

export type ConsoleAssetName = 'index.html' | 'console.js';

export function consoleAsset(name: ConsoleAssetName): Buffer {
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(join(ASSET_DIR, name));
    cache.set(name, body);
  }
  return body;
}
