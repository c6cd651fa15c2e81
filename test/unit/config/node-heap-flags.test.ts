// scripts/lib/node-heap-flags.sh: the node flags scripts/run.sh and the image start the gateway with.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/lib/node-heap-flags.sh');

function flags(semiSpaceMb?: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.HEAP_SEMI_SPACE_MB;
  if (semiSpaceMb !== undefined) env.HEAP_SEMI_SPACE_MB = semiSpaceMb;
  const r = spawnSync('bash', [script], { env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

describe('node-heap-flags.sh', () => {
  it('starts V8 with 32 MB semi-spaces unless HEAP_SEMI_SPACE_MB says otherwise', () => {
    expect(flags()).toMatchObject({ status: 0, stdout: '--max-semi-space-size=32' });
    expect(flags('64')).toMatchObject({ status: 0, stdout: '--max-semi-space-size=64' });
  });

  it("leaves V8's own size with 0", () => {
    expect(flags('0')).toMatchObject({ status: 0, stdout: '' });
  });

  it('refuses a value that is not a whole number of MB, naming the variable', () => {
    for (const bad of ['32mb', '-1', '2048']) {
      const r = flags(bad);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/HEAP_SEMI_SPACE_MB/);
    }
  });

  it('gives flags node accepts', () => {
    const r = spawnSync(process.execPath, [...flags().stdout.split(' '), '-e', 'process.exit(0)']);
    expect(r.status).toBe(0);
  });
});
