// The legs' jitter buffer against simulated lines, with and without the slack trim (JITTER_TRIM_SLACK):
// a sender whose frame n arrives at 20 n + phase ± uniform jitter ms (reordered as that makes it), the
// buffer popped every 20 ms with the pop's time, as a leg runs it (two-frame target and floor, adaptive).
// For each line: the frames' mean and largest wait in the buffer, underruns, concealed and dropped frames,
// and the target at the end. No sockets or event loop: what the rules do, not what a host costs.
//   npx tsx bench/media/jitter-trim-sim.ts [--seconds 60] [--seed 1]
// Prints figures; asserts nothing.
import { JitterBuffer } from '../../src/media/jitter-buffer.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const ticks = Math.max(100, Number(arg('seconds') ?? 60) * 50);
const seed = Number(arg('seed') ?? 1);
const quiet = new Int16Array(160).fill(8);

/** A deterministic uniform generator in [0, 1) (a line is the same for both settings). */
function uniform(start: number): () => number {
  let x = start;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function simulate(trimSlack: boolean, phaseMs: number, jitterMs: number): string {
  const rnd = uniform(seed);
  const jb = new JitterBuffer({ targetFrames: 2, minFrames: 2, trimSlack });
  const arrivals = Array.from({ length: ticks + 100 }, (_, n) => ({ n, at: n * 20 + phaseMs + (rnd() * 2 - 1) * jitterMs })).sort((a, b) => a.at - b.at);
  let next = 0;
  let waitSum = 0;
  let waitMax = 0;
  let played = 0;
  for (let k = 1; k <= ticks; k++) {
    const now = k * 20;
    for (; next < arrivals.length && (arrivals[next]?.at ?? Infinity) <= now; next++) {
      const a = arrivals[next];
      if (a) jb.push(a.n * 160, quiet, a.at);
    }
    jb.pop(undefined, now);
    if (!Number.isNaN(jb.lastWaitMs)) {
      waitSum += jb.lastWaitMs;
      waitMax = Math.max(waitMax, jb.lastWaitMs);
      played++;
    }
  }
  const s = jb.stats;
  const mean = played ? (waitSum / played).toFixed(1) : '-';
  return `wait mean ${mean} max ${waitMax.toFixed(1)} ms, underruns ${s.underruns}, concealed ${s.concealed}, dropped ${s.dropped}, target ${s.targetFrames}`;
}

console.log(`${ticks / 50} s per line, seed ${seed}`);
for (const jitterMs of [0, 3, 8, 15, 30]) {
  for (const phaseMs of [5, 12, 19]) {
    console.log(`phase ${phaseMs} ms ± ${jitterMs} ms: trim off: ${simulate(false, phaseMs, jitterMs)}`);
    console.log(`phase ${phaseMs} ms ± ${jitterMs} ms: trim on:  ${simulate(true, phaseMs, jitterMs)}`);
  }
}
