'use strict';
// Smoke mode (`BENCH_SMOKE=1` or `--smoke`): every bench runs its real path end to end with tiny
// sizes in a few seconds, and exits non-zero on any error or wrong answer. CI runs each bench this
// way (test/bench/bench-smoke.e2e.spec.ts) so a bench that no longer runs fails the build; the
// figures a smoke run prints mean nothing.
const SMOKE = process.env.BENCH_SMOKE === '1' || process.argv.includes('--smoke');

/** A numeric setting: the environment variable if set, else the full or the smoke default. */
function setting(name, full, smoke) {
  const raw = process.env[name];
  if (raw !== undefined && raw !== '') return Number(raw);
  return SMOKE ? smoke : full;
}

/** Throws (so the bench exits non-zero) unless the condition holds. */
function check(condition, message) {
  if (!condition) throw new Error(`bench check failed: ${message}`);
}

module.exports = { SMOKE, setting, check };
