import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * docs/architecture.md's port table against the committed API reports (libs/parse-agent/etc/):
 * every port token of the root is a row, each row's option is a `forRoot` option and the only one
 * typed with that port, and each default it names is exported by an entry point. The reports are
 * what `npm run lint:api` holds equal to the build, so the table cannot drift from the code.
 */
const ROOT = resolve(__dirname, '..', '..');
const ETC = join(ROOT, 'libs', 'parse-agent', 'etc');
const rootReport = readFileSync(join(ETC, 'nestjs-parse-agent.api.md'), 'utf8');
const allReports = readdirSync(ETC)
  .filter((name) => name.endsWith('.api.md'))
  .map((name) => readFileSync(join(ETC, name), 'utf8'))
  .join('\n');

interface PortRow {
  port: string;
  option: string;
  defaults: string[];
}

function portTable(): PortRow[] {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Ports (`ports/`)'));
  const lines = section.split('\n');
  const header = lines.findIndex((l) => l.startsWith('| port | option | default |'));
  const rows: PortRow[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [port, option, defaults] = line
      .split('|')
      .slice(1, 4)
      .map((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]));
    rows.push({
      port: port[0],
      option: option[0],
      defaults: defaults.filter((name) => /^[A-Z][A-Za-z]+$/.test(name)),
    });
  }
  return rows;
}

/** The members of ParseAgentModuleOptions in the root report: name -> type text. */
function moduleOptions(): Map<string, string> {
  const start = rootReport.indexOf('export interface ParseAgentModuleOptions ');
  const body = rootReport.slice(start, rootReport.indexOf('\n}\n', start));
  const members = new Map<string, string>();
  for (const m of body.matchAll(/^ {4}(\w+)\??[(:]([^\n]*)/gm)) members.set(m[1], m[2]);
  return members;
}

describe('docs/architecture.md: the port table agrees with the API report', () => {
  const rows = portTable();
  const options = moduleOptions();

  it('has one row per port token the root exports', () => {
    const tokens = [...rootReport.matchAll(/^export const (\w+): unique symbol;$/gm)].map(
      (m) => m[1],
    );
    expect(tokens.length).toBeGreaterThan(0);
    expect(rows.map((row) => row.port).sort()).toEqual(tokens.sort());
    for (const { port } of rows) expect(rootReport).toContain(`export interface ${port} {`);
  });

  it('names for each port the one forRoot option typed with it', () => {
    for (const { port, option } of rows) {
      const typedWithPort = [...options]
        .filter(([, type]) => new RegExp(`\\b(${port}|${port}sOption)\\b`).test(type))
        .map(([name]) => name);
      expect({ port, options: typedWithPort }).toEqual({ port, options: [option] });
    }
  });

  it('names defaults that an entry point exports', () => {
    const named = rows.flatMap((row) => row.defaults);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) {
      expect({ name, exported: allReports.includes(`export class ${name} `) }).toEqual({
        name,
        exported: true,
      });
    }
  });
});
