// Where the compiled streaming decoder lives, and building it on demand (the build script is
// idempotent and returns at once when the binary is newer than its source).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

// src/speech/stt/pocketsphinx (or dist/speech/stt/pocketsphinx) -> package root.
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export const DEFAULT_DECODER_BINARY = path.join(packageRoot, '.voxbridge/bin/vb-sphinx-decoder');
const BUILD_SCRIPT = path.join(packageRoot, 'scripts/build-sphinx-decoder.sh');

/** Builds .voxbridge/bin/vb-sphinx-decoder if missing or stale; returns its path. */
export async function ensureDecoderBinary(): Promise<string> {
  try {
    await run('bash', [BUILD_SCRIPT], { timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`cannot build the pocketsphinx decoder: ${(e.stderr || e.message).trim()}`);
  }
  return DEFAULT_DECODER_BINARY;
}
