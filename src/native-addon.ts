// The gateway's compiled addons (.voxbridge/native/<name>.node, built from C sources by
// scripts/build-<name>.sh at setup). A load builds the addon first when it is missing or older than its
// sources (the script returns at once otherwise), so a checkout that skipped setup still gets it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// src (or dist) -> package root.
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where addon `name` is built to. */
export function addonPath(name: string): string {
  return path.join(packageRoot, `.voxbridge/native/${name}.node`);
}

/** Builds (if needed) and loads addon `name`; throws with the build's own message when it cannot be built. */
export function buildAndLoadAddon(name: string): unknown {
  const script = path.join(packageRoot, `scripts/build-${name}.sh`);
  try {
    if (existsSync(script)) execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`cannot build the ${name} addon: ${(e.stderr?.toString() || e.message).trim()}`);
  }
  return createRequire(import.meta.url)(addonPath(name));
}
