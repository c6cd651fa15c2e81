// Alternated A/B runs of the media bench, one command: on a noisy host the same tree gives figures a
// third apart from one run to the next, so a change is compared in runs that take turns, and by the
// shares measured within each run (the event loop's, the send and receive threads') as much as by totals.
//   npx tsx bench/media/ab.ts --a MEDIA_IO_RECV_THREAD=false --b MEDIA_IO_RECV_THREAD=true [--pairs 3]
//                             [-- <bench/media/run.ts arguments, default: --scenarios rtp_to_rtp --calls 400 --capacity-step 0>]
// --a and --b each take NAME=VALUE[,NAME=VALUE...] for the environment of bench/media/run.ts (and so of its
// gateway processes). Prints each run's line and then, per side, the median and range of each figure.
// Prints figures; asserts nothing.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StepResult } from './scenarios.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function environment(spec: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (spec ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        if (at <= 0) throw new Error(`--a and --b take NAME=VALUE pairs, not "${pair}"`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
  );
}

const sides = { a: environment(arg('a')), b: environment(arg('b')) };
const pairs = Math.max(1, Number(arg('pairs') ?? 3));
const dash = process.argv.indexOf('--');
const benchArgs = dash > 0 ? process.argv.slice(dash + 1) : ['--scenarios', 'rtp_to_rtp', '--calls', '400', '--capacity-step', '0'];
const runScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run.ts');

/** One run of the bench with `env` added; its step results (the JSON line it ends with). */
function runOnce(env: Record<string, string>): StepResult[] {
  const out = spawnSync(process.execPath, ['--import', 'tsx', runScript, ...benchArgs], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = out.stdout.split('\n').find((l) => l.startsWith('{"bench":"media_path"'));
  if (!line) throw new Error(`bench/media/run.ts printed no result (exit ${out.status}): ${out.stderr.slice(-2000)}`);
  return (JSON.parse(line) as { results: StepResult[] }).results;
}

const FIGURES = [
  'latencyP50Ms',
  'latencyP99Ms',
  'lossPercent',
  'gatewaySilenceTrimmedPercent',
  'gatewayConcealedPercent',
  'pacerGapPercent',
  'gatewayCpuPercentOfOneCore',
  'gatewayMainThreadPercent',
  'gatewaySendThreadPercent',
  'gatewayRecvThreadPercent',
  'cpuMsPerCallSecond',
  'loadGeneratorCpuPercent',
  'hostBusyPercent',
  'hostStealPercent',
] as const satisfies readonly (keyof StepResult)[];

const label = (side: 'a' | 'b'): string =>
  Object.entries(sides[side])
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '(as is)';
const collected: Record<'a' | 'b', StepResult[][]> = { a: [], b: [] };
for (let pair = 0; pair < pairs; pair++) {
  // Each pair starts with the other side: neither always runs on the host's warmer or quieter moment.
  for (const side of pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
    const results = runOnce(sides[side]);
    collected[side].push(results);
    for (const r of results) console.log(`${side} ${r.scenario} ${r.calls}: ${FIGURES.map((f) => `${f} ${r[f] ?? '?'}`).join(', ')}`);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return Math.round(m * 100) / 100;
};
for (const side of ['a', 'b'] as const) {
  console.log(`\n${side}: ${label(side)}, ${collected[side].length} runs (median [min–max])`);
  const steps = collected[side][0] ?? [];
  steps.forEach((step, i) => {
    const cells = FIGURES.map((f) => {
      const xs = collected[side].map((run) => run[i]?.[f]).filter((x): x is number => typeof x === 'number');
      return xs.length ? `${f} ${median(xs)} [${Math.min(...xs)}–${Math.max(...xs)}]` : `${f} ?`;
    });
    console.log(`  ${step.scenario} ${step.calls}: ${cells.join(', ')}`);
  });
}
console.log(JSON.stringify({ bench: 'media_ab', pairs, a: sides.a, b: sides.b, runs: collected }));
