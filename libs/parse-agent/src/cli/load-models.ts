import { resolve } from 'node:path';
import type { ModelClass } from '../metadata/metadata.types';
import { CliUsageError } from './cli-settings';

/**
 * Loads decorated model classes from a module (compiled JS, or any file Node can require): every
 * exported class carrying this library's decorators, alone or in an exported array.
 */
export function loadModels(path: string): ModelClass[] {
  const file = resolve(path);
  let exported: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    exported = require(file) as Record<string, unknown>;
  } catch (error) {
    throw new CliUsageError(
      `Could not load models from ${path}: ${(error as Error)?.message ?? String(error)}. Point --models (or PARSE_AGENT_MODELS) at a compiled module that exports your decorated model classes.`,
    );
  }
  const models = new Set<ModelClass>();
  for (const value of Object.values(exported ?? {})) {
    const candidates = Array.isArray(value) ? value : [value];
    for (const candidate of candidates) {
      if (typeof candidate === 'function' && isDecorated(candidate)) models.add(candidate);
    }
  }
  if (!models.size) {
    throw new CliUsageError(
      `${path} exports no decorated model classes; export the classes (or an array of them) that carry @ParseClass and friends.`,
    );
  }
  return [...models];
}

function isDecorated(candidate: ModelClass): boolean {
  return Reflect.getMetadataKeys(candidate).some((key) => String(key).startsWith('parse-agent:'));
}
