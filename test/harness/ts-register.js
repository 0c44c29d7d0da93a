'use strict';
// Runs the demo's TypeScript sources in a child process without a build (the suites that start the
// demo with SIGTERM and DATA_DIR in play): transpile-only, like the jest transform, with the
// workspace's `nestjs-parse-agent` mapped to the library sources as jest maps it.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');

const root = path.resolve(__dirname, '..', '..');
const librarySources = path.join(root, 'libs', 'parse-agent', 'src');
const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'nestjs-parse-agent') request = path.join(librarySources, 'index.ts');
  else if (request.startsWith('nestjs-parse-agent/')) {
    request = path.join(librarySources, request.slice('nestjs-parse-agent/'.length));
  }
  return resolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
