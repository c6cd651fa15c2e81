// The converging live queue: order kept, nothing lost while producer and consumer keep pace, a
// standing backlog removed (quietest frames first), a hard cap. Driven tick by tick, no timers.
import { describe, expect, it } from 'vitest';
import { LiveQueue } from '../../../src/media/index.js';

interface F {
  n: number;
  loud: boolean;
}
const energy = (f: F) => (f.loud ? 1000 : 1);

/** Runs `ticks` consumer ticks; `produce(tick)` says how many frames arrive before that tick's release. */
function run(q: LiveQueue<F>, ticks: number, produce: (t: number) => number, loud: (n: number) => boolean = () => true) {
  const out: number[] = [];
  const depths: number[] = [];
  let n = 0;
  for (let t = 0; t < ticks; t++) {
    for (let k = produce(t); k > 0; k--) q.push({ n: n++, loud: loud(n) });
    const f = q.shift();
    if (f) out.push(f.n);
    q.endTick();
    depths.push(q.length);
  }
  return { out, depths, produced: n };
}

describe('LiveQueue', () => {
  it('passes a steady one-per-tick stream through in order with nothing lost', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 10 });
    const { out, produced, depths } = run(q, 500, () => 1);
    expect(out).toEqual([...Array(produced).keys()]);
    expect(Math.max(...depths)).toBe(0);
    expect(q.stats.trimmed + q.stats.overflowed).toBe(0);
  });

  it('keeps 200 ms chunks (10 frames every 10 ticks) whole: the depth swings but its minimum is 0', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 50 });
    const { out, produced } = run(q, 1000, (t) => (t % 10 === 0 ? 10 : 0));
    expect(out).toEqual([...Array(produced).keys()]);
    expect(q.stats.trimmed).toBe(0);
  });

  it('drains a standing backlog left by a start-up burst down to the target, quiet frames first', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 20, maxFrames: 15 });
    // 12 frames arrive at once, then one per tick forever: a plain FIFO would hold 12 frames for good.
    const { out, depths } = run(
      q,
      400,
      (t) => (t === 0 ? 12 : 1),
      (n) => n % 3 !== 0,
    );
    expect(depths.slice(-50).every((d) => d <= 1)).toBe(true);
    for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThan(out[i - 1]); // order kept
    expect(q.stats.trimmed).toBe(10);
    expect(q.stats.overflowed).toBe(0);
  });

  it('removes the quietest frames of the backlog and keeps the loud ones', () => {
    const q2 = new LiveQueue<F>(energy, { targetFrames: 3, windowTicks: 1, maxFrames: 15 });
    for (let n = 0; n < 6; n++) q2.push({ n, loud: n % 2 === 0 });
    expect(q2.endTick()).toBe(3); // a one-tick window: 6 queued, target 3
    const left: number[] = [];
    for (let f = q2.shift(); f; f = q2.shift()) left.push(f.n);
    expect(left).toEqual([0, 2, 4]);
  });

  it('never holds more than the cap, dropping the oldest', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, maxFrames: 5 });
    for (let n = 0; n < 9; n++) q.push({ n, loud: true });
    expect(q.length).toBe(5);
    expect(q.shift()!.n).toBe(4);
    expect(q.stats.overflowed).toBe(4);
  });

  it('converges under a producer whose clock runs fast in bursts (catch-up ticks) and stays bounded', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 50, maxFrames: 15 });
    // Every 100 ticks the producer's clock catches up 8 ticks at once (a stalled event loop).
    const { depths, out } = run(q, 5000, (t) => (t % 100 === 0 ? 9 : 1));
    expect(Math.max(...depths)).toBeLessThanOrEqual(15);
    const lastWindowMins = [];
    for (let w = 0; w < 10; w++) lastWindowMins.push(Math.min(...depths.slice(4000 + w * 100, 4000 + (w + 1) * 100)));
    expect(Math.max(...lastWindowMins)).toBeLessThanOrEqual(1);
    for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThan(out[i - 1]);
  });
});
