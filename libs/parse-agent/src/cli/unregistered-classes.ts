import { securityBanner } from '../core/security-banner';
import type { SchemaCache } from '../data/schema-cache';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import { CLI_ENV, type CliSettings } from './cli-settings';

/** Names shown in the hint before "and N more". */
const SHOWN = 8;

/**
 * Classes on the server that agents do not see only because no model declares them (Parse's
 * internal classes, hidden whatever the models say, are not counted).
 */
export async function unregisteredHiddenClasses(
  metadata: MetadataRegistry,
  schemas: SchemaCache,
): Promise<string[]> {
  const all = await schemas.all();
  return [...all.keys()]
    .filter((name) => metadata.hiddenEntry(name) === undefined)
    .filter((name) => metadata.isUnregisteredHidden(name))
    .sort();
}

/**
 * What the CLI says on stderr about classes no model declares: with `--expose-unregistered`, a
 * security banner saying what the operator just allowed; otherwise, without --models (when every
 * class is hidden), how many are and the two ways to reach them. An operator exploring their own server sees why a class is "not
 * found" instead of guessing.
 */
export async function reportUnregisteredClasses(
  settings: CliSettings,
  metadata: MetadataRegistry,
  schemas: SchemaCache,
  log: (line: string) => void,
): Promise<void> {
  if (settings.unregisteredClasses === 'visible') {
    securityBanner(
      'cli-expose-unregistered',
      `--expose-unregistered: every class on the Parse server is reachable, not only the ones your models declare (Parse's internal classes such as _Session stay hidden). The operator's agent reads them with the master key: no ACL, CLP or protectedFields apply, and a class without a model has no field allowlist, canonical filter or tenant scope.`,
    );
    return;
  }
  // With --models the operator chose what agents see (the boot report of the module lists the
  // rest); without, every class is hidden, which reads as an empty server unless said.
  if (settings.models || settings.quiet) return;
  let hidden: string[];
  try {
    hidden = await unregisteredHiddenClasses(metadata, schemas);
  } catch {
    // The start-up check already proved the server answers; a hint is not worth failing for.
    return;
  }
  if (!hidden.length) return;
  const names =
    hidden.length > SHOWN
      ? `${hidden.slice(0, SHOWN).join(', ')} and ${hidden.length - SHOWN} more`
      : hidden.join(', ');
  const count = hidden.length === 1 ? '1 class' : `${hidden.length} classes`;
  const expose =
    settings.identity.kind === 'master'
      ? `, or pass --expose-unregistered (${CLI_ENV.exposeUnregistered}=1) to let the operator's master-key agent reach every class`
      : '';
  log(
    `note: ${count} on the Parse server ${hidden.length === 1 ? 'is' : 'are'} hidden from agents because no model declares ${hidden.length === 1 ? 'it' : 'them'}: ${names}. Load your decorated models with --models (${CLI_ENV.models})${expose}.`,
  );
}
