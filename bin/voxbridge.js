#!/usr/bin/env node
// The `voxbridge` command: runs the compiled CLI (npm ci builds dist/ through `prepare`).
import('../dist/cli/index.js').catch((err) => {
  console.error(`voxbridge: ${err && err.message ? err.message : err}`);
  console.error('voxbridge: is dist/ built? run `npm run build`');
  process.exit(1);
});
