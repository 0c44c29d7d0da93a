/* eslint-disable @typescript-eslint/no-require-imports */
/* global require, module */
/**
 * Jest transform for ES-module packages in node_modules (Nest 12 ships its packages as ES modules).
 * Node 20.19+ loads them with require() by itself, but Jest 29's module loader cannot, so the suites
 * get them compiled to CommonJS here (transpile only). Files without import/export pass unchanged.
 */
const ts = require('typescript');

const ESM_SYNTAX = /^\s*(?:import\s*[\w{*'"]|export\s)/m;
const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  allowJs: true,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

module.exports = {
  process(source, filename) {
    if (!ESM_SYNTAX.test(source)) return { code: source };
    // import.meta only parses in a module; in CommonJS the same URL comes from __filename.
    const patched = source.replace(
      /\bimport\.meta\.url\b/g,
      "require('node:url').pathToFileURL(__filename).href",
    );
    const { outputText } = ts.transpileModule(patched, { compilerOptions, fileName: filename });
    return { code: outputText };
  },
};
