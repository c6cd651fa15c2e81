// Call setup cost before/after the SIP safety layer, in the same run: setup-cost.ts (CPU per
// completed setup, PostgreSQL backend CPU per setup, completed/s at each offered rate) in
//   before  — the tree before the framing layer (commit BEFORE, default e226673: the `sip` package's
//             own transports, no capture), extracted with `git archive` into a temporary directory
//             that shares this tree's node_modules;
//   on      — this tree, SIP capture on (the default);
//   off     — this tree, SIP_BENCH_CAPTURE=off;
//   nowrite — (only when asked for) this tree, capture on but its batches discarded, not written;
//   base    — (only when asked for) another commit, --base (default main), capture on: e.g. the
//             capture before an optimisation;
// alternated round by round (before, on, off, before, …) so the machine's load falls on all alike.
//   npx tsx bench/sip/setup-compare.ts [--rounds 3] [--rates 100,200] [--step-seconds 5] [--before e226673] [--base main] [--variants before,on,off]
// Prints each step as it runs, then medians per variant and rate. Asserts nothing.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CostStep } from './setup-cost.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const rounds = Number(arg('rounds') ?? 3);
const rates = arg('rates') ?? '100,200';
const stepSeconds = arg('step-seconds') ?? '5';
const before = arg('before') ?? 'e226673';
const base = arg('base') ?? 'main';
const variants = (arg('variants') ?? 'before,on,off').split(',');

/** An old tree, once: its sources at `commit`, this tree's node_modules, and this bench's driver files. */
function prepareTree(commit: string): string {
  const sha = execFileSync('git', ['rev-parse', '--short', commit], { cwd: root, encoding: 'utf8' }).trim();
  const dir = path.join(os.tmpdir(), `voxbridge-bench-before-${sha}`);
  if (!existsSync(path.join(dir, 'package.json'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C '${dir}'`], { cwd: root });
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  }
  for (const f of ['setup-cost.ts', 'pg-cpu.ts', 'sipp-calls.ts']) copyFileSync(path.join(here, f), path.join(dir, 'bench/sip', f));
  return dir;
}

function runVariant(variant: string, cwd: string): Promise<CostStep[]> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, SIP_BENCH_CAPTURE: variant === 'off' ? 'off' : variant === 'nowrite' ? 'nowrite' : 'on' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sip/setup-cost.ts', '--rates', rates, '--step-seconds', stepSeconds], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const steps: CostStep[] = [];
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('{"step"')) continue;
        const { step } = JSON.parse(line) as { step: CostStep };
        steps.push(step);
        console.log(
          `${variant.padEnd(6)} ${String(step.rate).padStart(4)}/s offered: ${step.completedPerSecond}/s completed (${step.successful}/${step.calls} ok, ${step.failed} failed), ` +
            `gateway ${step.cpuUsPerSetup} µs CPU/setup (${step.cpuPercent} %), PostgreSQL ${step.pgCpuUsPerSetup} µs/setup, ${step.capturedPerSetup} captured/setup, load ${step.loadAverage}`,
        );
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(steps) : reject(new Error(`${variant}: setup-cost exited ${code}`))));
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : Math.round(((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2);
};

const trees: Record<string, string> = {
  before: variants.includes('before') ? prepareTree(before) : root,
  base: variants.includes('base') ? prepareTree(base) : root,
  on: root,
  off: root,
  nowrite: root,
};
const results: Record<string, CostStep[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    const cwd = trees[v];
    if (!cwd) throw new Error(`unknown variant ${v} (before, base, on, off, nowrite)`);
    (results[v] ??= []).push(...(await runVariant(v, cwd)));
  }
}
console.log(
  `\nmedians over ${rounds} round(s) (load average now ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}):`,
);
const summary = [];
for (const v of variants) {
  for (const rate of rates.split(',').map(Number)) {
    const s = (results[v] ?? []).filter((x) => x.rate === rate);
    if (s.length === 0) continue;
    const row = {
      variant: v,
      rate,
      runs: s.length,
      completedPerSecond: median(s.map((x) => x.completedPerSecond)),
      completedRange: `${Math.min(...s.map((x) => x.completedPerSecond))}–${Math.max(...s.map((x) => x.completedPerSecond))}`,
      cpuUsPerSetup: median(s.map((x) => x.cpuUsPerSetup)),
      pgCpuUsPerSetup: median(s.map((x) => x.pgCpuUsPerSetup)),
      failed: s.reduce((a, x) => a + x.failed, 0),
      load: `${Math.min(...s.map((x) => x.loadAverage))}–${Math.max(...s.map((x) => x.loadAverage))}`,
    };
    summary.push(row);
    console.log(
      `${v.padEnd(6)} ${String(rate).padStart(4)}/s: ${row.completedPerSecond}/s completed (${row.completedRange}), gateway ${row.cpuUsPerSetup} µs/setup, PostgreSQL ${row.pgCpuUsPerSetup} µs/setup, ${row.failed} failed, load ${row.load}`,
    );
  }
}
console.log(JSON.stringify({ bench: 'sip_setup_cost_before_after', before, base, summary }));
process.exit(0);
