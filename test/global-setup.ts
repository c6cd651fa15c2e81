// Runs once before the suite: tests that spawn the real `voxbridge` command run dist/, so rebuild it
// when any source file is newer than the build (npm test's setup does the same; this covers
// `npx vitest` run directly after an edit).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

function newestMtime(dir: string, pattern = /\.ts$/): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full, pattern));
    else if (pattern.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** The web console (web/ → dist/web) for the browser tests, rebuilt when web/ changed. */
function buildWebConsole(): void {
  const built = path.join(root, 'dist/web/index.html');
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(path.join(root, 'web'), /\.(tsx?|css|html|js)$/)) return;
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--config', path.join(root, 'web/vite.config.ts')],
    { stdio: 'inherit' },
  );
}

export default function setup(): void {
  buildWebConsole();
  const built = path.join(root, 'dist/cli/index.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(path.join(root, 'src'))) return;
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  } catch {
    // tsc still emits on type errors; `npm test` fails on them in its own typecheck step.
    console.warn('[global-setup] tsc reported errors; dist/ was emitted anyway');
  }
}
