#!/usr/bin/env node
'use strict';
// The API reports: one per entry point of the library (package.json "exports"), each from its
// api-extractor config (libs/parse-agent/api-extractor.json for the root, api-extractor.<subpath>.json
// for a subpath) into libs/parse-agent/etc/nestjs-parse-agent[.<subpath>].api.md. Run on the build.
//   node scripts/api-report.js           fails when a report differs from the declarations (lint:api)
//   node scripts/api-report.js --local   writes the reports instead (api:update)
// A subpath without its config fails, so a new entry point cannot skip its report.
const fs = require('node:fs');
const path = require('node:path');
const { CompilerState, Extractor, ExtractorConfig } = require('@microsoft/api-extractor');
const { entryPoints } = require('./count-exports');

const LIBRARY = path.join(__dirname, '..', 'libs', 'parse-agent');
const localBuild = process.argv.includes('--local');

const configs = entryPoints().map((entry) => {
  const file = path.join(
    LIBRARY,
    entry === 'index' ? 'api-extractor.json' : `api-extractor.${entry}.json`,
  );
  if (!fs.existsSync(file)) {
    throw new Error(
      `${path.relative(process.cwd(), file)} is missing: every entry point has its API report`,
    );
  }
  return { entry, config: ExtractorConfig.loadFileAndPrepare(file) };
});
// One TypeScript program for every entry point (each is a root of it).
const compilerState = CompilerState.create(configs[0].config, {
  additionalEntryPoints: configs.map(({ config }) => config.mainEntryPointFilePath),
});
let failed = 0;
for (const { entry, config } of configs) {
  const result = Extractor.invoke(config, {
    localBuild,
    compilerState,
    showVerboseMessages: false,
  });
  const report = path.relative(process.cwd(), config.reportFilePath);
  if (!result.succeeded) {
    failed++;
    console.error(
      `${entry}: ${report} differs from the build (run npm run api:update and review the diff)`,
    );
  } else if (result.apiReportChanged) {
    console.log(`${entry}: ${report} updated`);
  }
}
if (failed) process.exitCode = 1;
