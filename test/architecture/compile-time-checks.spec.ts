import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';

/**
 * Specs that make claims about types (a `@ts-expect-error` line: "this must not compile") are
 * type-checked here, since jest only transpiles (jest.config.js) and the build leaves specs out.
 * Without this a `@ts-expect-error` whose line compiles again, or a false `Same<...>` in
 * libs/parse-agent/src/tools/schema-types.spec.ts, would pass CI unseen.
 *
 * The compiler options are the project's (`tsconfig.json`); the program holds the selected specs,
 * what they import and the one global declaration the library relies on (reflect-metadata's
 * `Reflect.getMetadata`), and only the specs are checked, which keeps this to seconds rather than
 * the minute `npx tsc --noEmit -p tsconfig.json` takes over the whole repository.
 */
const ROOT = join(__dirname, '..', '..');
const FOLDERS = ['libs/parse-agent/src', 'src', 'test'];
const MARKER = '@ts-expect-error';

function specsWithTypeClaims(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(path).isDirectory()) specsWithTypeClaims(path, out);
    else if (name.endsWith('.spec.ts') && readFileSync(path, 'utf8').includes(MARKER)) {
      out.push(path);
    }
  }
  return out;
}

function projectOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options, noEmit: true };
}

/** Declarations the library's sources use as globals, imported once by its entry points. */
const GLOBALS = [join(dirname(require.resolve('reflect-metadata')), 'index.d.ts')];

/** Every error in the given files, as `path:line: message`. */
function typeErrors(files: string[], program: ts.Program): string[] {
  return files.flatMap((file) => {
    const source = program.getSourceFile(file);
    if (!source) return [`${relative(ROOT, file)}: not in the program`];
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
      .filter((d) => d.category === ts.DiagnosticCategory.Error)
      .map((d) => {
        const line = source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1;
        const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
        return `${relative(ROOT, file)}:${line}: ${message}`;
      });
  });
}

describe('specs with compile-time claims', () => {
  const specs = FOLDERS.flatMap((folder) => specsWithTypeClaims(join(ROOT, folder)));

  it('finds them, the argument types spec among them', () => {
    expect(specs.map((path) => relative(ROOT, path))).toEqual(
      expect.arrayContaining(['libs/parse-agent/src/tools/schema-types.spec.ts']),
    );
  });

  it('type-check: every claim holds and every @ts-expect-error line is an error', () => {
    const program = ts.createProgram([...GLOBALS, ...specs], projectOptions());
    expect(typeErrors(specs, program)).toEqual([]);
  }, 180_000);

  it('would fail on a @ts-expect-error line that compiles, or a type error', () => {
    const file = join(ROOT, 'test', 'architecture', '__probe__.spec.ts');
    const text = [
      '// @ts-expect-error this line compiles, so the directive is unused',
      'export const fine: number = 1;',
      "export const wrong: number = 'one';",
    ].join('\n');
    const options: ts.CompilerOptions = { strict: true, noEmit: true, types: [] };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (path, language, ...rest) =>
      path === file
        ? ts.createSourceFile(path, text, language, true)
        : getSourceFile(path, language, ...rest);
    const program = ts.createProgram([file], options, host);
    const errors = typeErrors([file], program);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/__probe__\.spec\.ts:1: Unused '@ts-expect-error' directive/);
    expect(errors[1]).toMatch(/__probe__\.spec\.ts:3: Type 'string' is not assignable/);
  });
});
