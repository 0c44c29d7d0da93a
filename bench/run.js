#!/usr/bin/env node
// Benchmarks live here; see bench/README.md. Filled in with the MCP endpoint work.
console.log('No benchmarks yet: see bench/README.md.');
