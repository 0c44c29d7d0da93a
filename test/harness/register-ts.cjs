/* eslint-disable @typescript-eslint/no-require-imports */
/* global require, __dirname, process */
/**
 * Lets `node -r test/harness/register-ts.cjs file.ts` run the TypeScript sources, so suites can
 * launch the `parse-agent` CLI as a real child process without a build step. Transpile only
 * (TypeScript's own transpileModule with the project's compiler options), cached on disk by
 * content hash; `nestjs-parse-agent` resolves to the library sources, as in jest.config.js.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');

const root = path.resolve(__dirname, '../..');
const librarySrc = path.join(root, 'libs/parse-agent/src');
const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.CommonJS,
  sourceMap: false,
  inlineSourceMap: true,
  inlineSources: false,
  declaration: false,
  noEmit: false,
};
const cacheDir = path.join(os.tmpdir(), `parse-agent-ts-cache-${ts.version}`);
fs.mkdirSync(cacheDir, { recursive: true });

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'nestjs-parse-agent') request = path.join(librarySrc, 'index.ts');
  else if (request.startsWith('nestjs-parse-agent/')) {
    request = path.join(librarySrc, request.slice('nestjs-parse-agent/'.length));
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function (module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha1').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
    const temporary = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, output);
    fs.renameSync(temporary, cached);
  }
  module._compile(output, filename);
};
