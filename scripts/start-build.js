#!/usr/bin/env node
'use strict';
// The build `npm start` runs: the library (libs/parse-agent/src -> libs/parse-agent/dist) and the
// demo (src -> dist/src) transpiled file by file with TypeScript's transpileModule, the compiler
// options read from the same tsconfig files `npm run build` uses. No type-check here: `npm run
// build` (tsc, both projects), `npx tsc -p tsconfig.json --noEmit`, lint and the test suites do
// that. The tsconfig sets isolatedModules, so tsc itself rejects any file whose emit would need
// type information (a type imported without `import type` into a decorated signature, say), and
// transpiling each file alone gives the same JavaScript, decorator metadata included.
//
// Incremental: a manifest (node_modules/.cache/start-build/manifest.json) keeps each source's
// content hash; a file is transpiled again only when its source changed, its output is missing, or
// the compiler or a tsconfig changed. When nothing changed it does not even load TypeScript.
//   node scripts/start-build.js           the build `npm start` runs
//   node scripts/start-build.js --force   every file again, manifest ignored (or START_BUILD_FORCE=1)
//   START_BUILD_VERBOSE=1                 one line with the counts and the time taken
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker, isMainThread, parentPort, threadId, workerData } = require('node:worker_threads');

const ROOT = path.join(__dirname, '..');
const MANIFEST = path.join(ROOT, 'node_modules', '.cache', 'start-build', 'manifest.json');
/** At most this many threads transpile at once (more only adds TypeScript loads). */
const MAX_THREADS = 4;
/** Bump when this script's output changes for the same sources. */
const SCRIPT_VERSION = 1;
const PROJECTS = [
  { tsconfig: 'libs/parse-agent/tsconfig.lib.json', srcDir: 'libs/parse-agent/src' },
  { tsconfig: 'tsconfig.build.json', srcDir: 'src' },
];

/** The sources tsc compiles for these projects: every .ts under the source folder, specs and declarations left out. */
function sources(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...sources(full));
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.spec.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      out.push(full);
    }
  }
  return out;
}

const sha1 = (text) => crypto.createHash('sha1').update(text).digest('hex');

/** What, besides a file's own source, decides its output: the compiler and the tsconfig files. */
function settingsKey() {
  const parts = [
    `v${SCRIPT_VERSION}`,
    fs.readFileSync(path.join(ROOT, 'node_modules', 'typescript', 'package.json'), 'utf8'),
    fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'),
    ...PROJECTS.map((p) => fs.readFileSync(path.join(ROOT, p.tsconfig), 'utf8')),
  ];
  return sha1(parts.join('\0'));
}

function readManifest(key) {
  try {
    const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
    return manifest.key === key ? manifest.files : {};
  } catch {
    return {};
  }
}

/** The project's compiler options and output folder, as tsc reads them (TypeScript loaded lazily). */
function projectOptions(ts, project) {
  const file = path.join(ROOT, project.tsconfig);
  const read = ts.readConfigFile(file, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(file));
  const { options } = parsed;
  return {
    outDir: options.outDir,
    rootDir: options.rootDir,
    sourceMap: Boolean(options.sourceMap),
    compilerOptions: {
      ...options,
      declaration: false,
      declarationMap: false,
      composite: false,
      incremental: false,
      noEmit: false,
      inlineSourceMap: false,
      inlineSources: false,
    },
  };
}

/** A process loading dist/ meanwhile (a bench, a running demo) sees the old file or the new one. */
function writeAtomically(file, text) {
  const temporary = `${file}.${process.pid}.${threadId}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

/** Transpiles these files and writes their output; returns where each one went. */
function transpileFiles(work) {
  // Loaded only when there is something to transpile: loading it is most of a no-op's cost.
  const ts = require('typescript');
  const options = PROJECTS.map((p) => projectOptions(ts, p));
  const madeDirs = new Set();
  return work.map(({ project, file, relative, source, hash }) => {
    const { outDir, rootDir, sourceMap, compilerOptions } = options[project];
    const output = path.join(outDir, path.relative(rootDir, file)).replace(/\.ts$/, '.js');
    const result = ts.transpileModule(source, {
      compilerOptions: { ...compilerOptions, sourceMap },
      fileName: file,
      reportDiagnostics: true,
    });
    const errors = (result.diagnostics ?? []).filter(
      (d) => d.category === ts.DiagnosticCategory.Error,
    );
    if (errors.length) {
      const text = errors
        .map((d) => `${relative}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
        .join('\n');
      throw new Error(`TypeScript could not transpile ${relative}:\n${text}`);
    }
    const dir = path.dirname(output);
    if (!madeDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    if (sourceMap && result.sourceMapText) {
      // As tsc writes it: the source named relative to the map, not by its bare file name.
      const map = JSON.parse(result.sourceMapText);
      map.sources = [path.relative(dir, file).split(path.sep).join('/')];
      writeAtomically(`${output}.map`, JSON.stringify(map));
    }
    writeAtomically(output, result.outputText);
    return { relative, hash, output: path.relative(ROOT, output) };
  });
}

/**
 * Spreads a large batch over worker threads (one per core, this thread included): each loads
 * TypeScript and takes every n-th file. A handful of changed files stays on this thread.
 */
async function transpileAll(work) {
  const threads = Math.min(MAX_THREADS, os.availableParallelism(), Math.ceil(work.length / 40));
  if (threads <= 1) return transpileFiles(work);
  const shares = Array.from({ length: threads }, (_, i) =>
    work.filter((_, j) => j % threads === i),
  );
  const workers = shares.slice(1).map(
    (share) =>
      new Promise((resolve, reject) => {
        const worker = new Worker(__filename, { workerData: share });
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.once('exit', (code) => {
          if (code !== 0) reject(new Error(`a start-build worker exited with ${code}`));
        });
      }),
  );
  const mine = transpileFiles(shares[0]);
  return [...mine, ...(await Promise.all(workers)).flat()];
}

async function main() {
  const started = process.hrtime.bigint();
  const force = process.argv.includes('--force') || process.env.START_BUILD_FORCE === '1';
  const key = settingsKey();
  const previous = force ? {} : readManifest(key);
  const next = {};
  const work = [];
  for (const project of PROJECTS) {
    for (const file of sources(path.join(ROOT, project.srcDir))) {
      const source = fs.readFileSync(file, 'utf8');
      const relative = path.relative(ROOT, file);
      const hash = sha1(source);
      const done = previous[relative];
      if (done && done.hash === hash && fs.existsSync(path.join(ROOT, done.output))) {
        next[relative] = done;
      } else {
        work.push({ project: PROJECTS.indexOf(project), file, relative, source, hash });
      }
    }
  }

  if (work.length) {
    const done = await transpileAll(work);
    for (const entry of done) next[entry.relative] = { hash: entry.hash, output: entry.output };
    fs.mkdirSync(path.dirname(MANIFEST), { recursive: true });
    writeAtomically(MANIFEST, JSON.stringify({ key, files: next }));
  }

  if (process.env.START_BUILD_VERBOSE === '1') {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const total = Object.keys(next).length;
    console.log(
      `start-build: ${work.length} of ${total} files transpiled in ${(ms / 1000).toFixed(2)} s`,
    );
  }
}

if (isMainThread) {
  main().catch((error) => {
    process.stderr.write(`${error && error.message ? error.message : String(error)}\n`);
    process.exit(1);
  });
} else {
  parentPort.postMessage(transpileFiles(workerData));
}
