import { BUILTIN_DATA_PATHS } from '../composition/data-paths';
import type { OpenedDataPath } from '../data/data-path-descriptor';
import { probeParse } from '../data/parse-rest/parse-server-probe';
import type { ProbeOutcome } from '../data/probe';
import { CLI_ENV, CliUsageError, type CliSettings } from './cli-settings';

type Problem = Extract<ProbeOutcome, { ok: false }>;

/** The module's option names, as the CLI user sets them (variable, then flag). */
const CLI_NAMES: ReadonlyArray<[option: string, cli: string]> = [
  ['parse.serverURL', `${CLI_ENV.serverURL} (--server-url)`],
  ['parse.appId', `${CLI_ENV.appId} (--app-id)`],
  ['parse.masterKey', CLI_ENV.masterKey],
  ['parse.javascriptKey', CLI_ENV.javascriptKey],
  ...BUILTIN_DATA_PATHS.map(
    (path) => [`${path.kind}.uri`, `${path.uri.env} (${path.uri.flag})`] as [string, string],
  ),
];

/** A probe's sentence with the module's option names replaced by the CLI's settings. */
export function inCliTerms(text: string): string {
  let out = text;
  for (const [option, cli] of CLI_NAMES) out = out.split(option).join(cli);
  return out;
}

/**
 * The module's start-up check, run before any command: one master-key read of Parse Server (the
 * URL, the application id and the master key at once) and one query per direct database path, all
 * with a time limit. A wrong setting is one message naming it (PARSE_MASTER_KEY, PARSE_SERVER_URL,
 * POSTGRES_URI, ...) and exit code 2, instead of a tool list that looks fine and calls that fail.
 */
export async function runCliStartupCheck(
  settings: CliSettings,
  opened: readonly OpenedDataPath[],
  timeoutMs = 5_000,
): Promise<void> {
  const outcomes = await Promise.all([
    probeParse(settings.parse, timeoutMs),
    ...opened.map((path) => path.probe(timeoutMs)),
  ]);
  const problems = outcomes.filter((o): o is Problem => !o.ok);
  if (!problems.length) return;
  const lines = problems.map((p) => `${inCliTerms(p.setting)}: ${inCliTerms(p.message)}`);
  throw new CliUsageError(
    lines.length === 1
      ? `Start-up check failed: ${lines[0]}`
      : `Start-up check failed:\n${lines.map((l) => `  ${l}`).join('\n')}`,
  );
}
