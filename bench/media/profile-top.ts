// Reads a V8 CPU profile (SIP_BENCH_PROFILE=<dir> writes one per gateway run) and prints where the
// busy time went: self time per function (with its file), and the share of idle, GC and program time.
//   npx tsx bench/media/profile-top.ts <file.cpuprofile> [--top 40] [--until <µs> --span <ms>]
// --until/--span keep only the samples of the `span` ms before the monotonic time `until` (µs): what ran
// up to a loop stall that BENCH_STAGES=1 printed with its `hrUs`.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [--top N]');
  process.exit(2);
}
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 40;
const untilIdx = process.argv.indexOf('--until');
const untilUs = untilIdx > 0 ? Number(process.argv[untilIdx + 1]) : Infinity;
const spanIdx = process.argv.indexOf('--span');
const fromUs = untilIdx > 0 ? untilUs - (spanIdx > 0 ? Number(process.argv[spanIdx + 1]) : 150) * 1000 : -Infinity;
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
// Sample i is taken at startTime + the deltas up to i (the profiler's clock is the monotonic one of hrtime).
let at = p.startTime;
p.samples.forEach((id, i) => {
  at += p.timeDeltas[i] ?? 0;
  if (at >= fromUs && at <= untilUs) selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
});

const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const byName = new Map<string, number>();
let idle = 0;
for (const [id, us] of selfUs) {
  const n = byId.get(id);
  if (!n) continue;
  const f = n.callFrame;
  if (f.functionName === '(idle)') {
    idle += us;
    continue;
  }
  const where = f.url ? `${f.url.replace(/^.*\/(node_modules|src|bench|test)\//, '$1/').replace(/^node:/, '')}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  byName.set(key, (byName.get(key) ?? 0) + us);
}
const busy = total - idle;
console.log(`profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, busy ${((busy / total) * 100).toFixed(1)} %`);
console.log('share of busy time  function');
for (const [k, us] of [...byName.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((us / busy) * 100).toFixed(2).padStart(6)} %  ${k}`);
}
