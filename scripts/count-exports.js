#!/usr/bin/env node
'use strict';
// Counts the names each entry point of the library exposes, as TypeScript resolves them (named
// re-exports, `export *` re-exports and types alike), from the entry points package.json lists.
//   node scripts/count-exports.js             the built declarations (libs/parse-agent/dist/*.d.ts)
//   node scripts/count-exports.js --src       the sources (libs/parse-agent/src/*.ts), no build needed
//   node scripts/count-exports.js --names     every name, one a line, under its entry point
// test/architecture/entry-points.spec.ts holds the root to ROOT_NAME_LIMIT with the same function.
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const LIBRARY = path.join(__dirname, '..', 'libs', 'parse-agent');
/** The most names the root entry point may carry (issue 33: half the public surface). */
const ROOT_NAME_LIMIT = 150;

/** Entry points from package.json "exports": '.' -> 'index', './redis' -> 'redis', ... */
function entryPoints() {
  const pkg = JSON.parse(fs.readFileSync(path.join(LIBRARY, 'package.json'), 'utf8'));
  return Object.keys(pkg.exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? 'index' : key.slice(2)));
}

/** The exported names of each entry point, sorted; `fromSource` reads src/*.ts instead of dist. */
function exportedNames({ fromSource = false } = {}) {
  const files = Object.fromEntries(
    entryPoints().map((entry) => [
      entry,
      path.join(LIBRARY, fromSource ? 'src' : 'dist', `${entry}${fromSource ? '.ts' : '.d.ts'}`),
    ]),
  );
  for (const file of Object.values(files)) {
    if (!fs.existsSync(file)) {
      throw new Error(
        `${file} is missing; build the library first (npm run build:lib) or pass --src`,
      );
    }
  }
  const program = ts.createProgram(Object.values(files), {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ES2022,
    experimentalDecorators: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const result = {};
  for (const [entry, file] of Object.entries(files)) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    result[entry] = symbol
      ? checker
          .getExportsOfModule(symbol)
          .map((s) => s.name)
          .sort()
      : [];
  }
  return result;
}

module.exports = { ROOT_NAME_LIMIT, entryPoints, exportedNames };

if (require.main === module) {
  const names = exportedNames({ fromSource: process.argv.includes('--src') });
  let subpaths = 0;
  for (const [entry, list] of Object.entries(names)) {
    if (entry !== 'index') subpaths += list.length;
    console.log(`${entry === 'index' ? '.' : `./${entry}`}: ${list.length}`);
    if (process.argv.includes('--names')) for (const name of list) console.log(`  ${name}`);
  }
  console.log(`root ${names.index.length} (limit ${ROOT_NAME_LIMIT}), subpaths ${subpaths}`);
  if (names.index.length > ROOT_NAME_LIMIT) process.exitCode = 1;
}
