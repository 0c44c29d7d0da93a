#!/usr/bin/env node
/* eslint-disable @typescript-eslint/no-require-imports */
/* global require, __dirname, process */
'use strict';
// The `parse-agent` command. This file is committed (not built) so that `npm install` links the
// command even in a fresh clone of the repository, where dist/ does not exist until the build.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const main = join(__dirname, '..', 'dist', 'cli.main.js');
if (!existsSync(main)) {
  process.stderr.write(
    `parse-agent: ${main} is missing: the library is not built. In the nestjs-parse-agent repository, run \`npm run build\` first.\n`,
  );
  process.exit(2);
}
require(main);
