// The converging live queue: order kept, nothing lost while producer and consumer keep pace, a
// standing backlog removed (quietest frames first), a hard cap. Driven tick by tick, no timers.
import { describe, expect, it } from 'vitest';
import { LiveQueue, SILENT_FRAME_ENERGY, frameEnergy } from '../../../src/media/index.js';
import { collectGarbage } from '../../helpers/force-gc.js';
import { defined } from '../../helpers/defined.js';

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
    for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThan(defined(out[i - 1])); // order kept
    expect(q.stats.trimmed).toBe(10);
    expect(q.stats.overflowed).toBe(0);
  });

  it('finds a surplus that appears mid-stream one window after it appears', () => {
    // Silence throughout (paid at once); a 4-frame burst at tick 5 on a stream that kept pace.
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 10, silenceEnergy: 1 });
    const { depths } = run(
      q,
      40,
      (t) => (t === 5 ? 5 : 1),
      () => false,
    );
    expect(depths.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(Math.min(...depths.slice(5, 14))).toBe(4); // standing for the window (ticks 5-14)
    expect(depths[14]).toBe(1); // found and paid at the window's end, not at the next fixed window's (tick 19)
    expect(q.stats.trimmed).toBe(3);
  });

  it('fits its window to the arrivals: 200 ms for a frame-paced stream, the whole window for chunks', () => {
    // Defaults (up to 50 ticks). A stream that kept pace, then a stall's 4 frames at once at tick 100.
    const paced = new LiveQueue<F>(energy, { targetFrames: 1, silenceEnergy: 1 });
    const { depths } = run(
      paced,
      140,
      (t) => (t === 100 ? 5 : 1),
      () => false,
    );
    expect(paced.windowTicks).toBe(10);
    expect(Math.min(...depths.slice(100, 109))).toBe(4);
    expect(depths[109]).toBe(1); // found and paid after 10 ticks, not 50
    expect(paced.stats.trimmed).toBe(3);
    // 100 ms chunks (frames in one tick of five): the whole window, and nothing trimmed from the swing.
    const chunked = new LiveQueue<F>(energy, { targetFrames: 1, silenceEnergy: 1 });
    run(
      chunked,
      500,
      (t) => (t % 5 === 0 ? 5 : 0),
      () => false,
    );
    expect(chunked.windowTicks).toBe(50);
    expect(chunked.stats.trimmed).toBe(0);
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
    for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThan(defined(out[i - 1]));
  });

  it('waits for silence to pay a surplus instead of cutting speech, while silence comes within a window', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 10, silenceEnergy: 1 });
    // A 4-frame burst at start-up, then speech with a 60 ms pause every 300 ms (frames 12-14 of 15).
    const silent = (m: number) => m % 15 >= 12;
    const { out, produced, depths } = run(
      q,
      60,
      (t) => (t === 0 ? 5 : 1),
      (k) => !silent(k - 1), // run() asks for frame m as loud(m + 1)
    );
    const last = defined(out[out.length - 1], 'last frame played');
    const voicedOut = out.filter((m) => !silent(m));
    const voicedIn = [...Array(produced).keys()].filter((m) => !silent(m) && m <= last);
    expect(voicedOut).toEqual(voicedIn); // every speech frame played, in order
    expect(q.stats.trimmed).toBeGreaterThan(0); // the surplus went, in pauses
    expect(q.stats.trimmedVoiced).toBe(0);
    expect(Math.max(...depths.slice(-20))).toBeLessThanOrEqual(1);
  });

  it('cuts the quietest speech only after a whole window brought no silence, and converges', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 10, silenceEnergy: 0 });
    const { depths } = run(q, 60, (t) => (t === 0 ? 5 : 1));
    expect(q.pendingTrim).toBe(0);
    expect(q.stats.trimmedVoiced).toBe(q.stats.trimmed);
    expect(q.stats.trimmed).toBeGreaterThan(0);
    expect(Math.max(...depths.slice(-20))).toBeLessThanOrEqual(1);
    // Found at the first window's end (tick 9), cut at the second's (tick 19), not before.
    expect(depths[9]).toBeGreaterThan(1);
    expect(depths[19]).toBeLessThanOrEqual(1);
  });
});

// Real PCM frames, as the pacer and the RTP sender queue them.
const tone1k = (amp: number): Int16Array => Int16Array.from({ length: 160 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
const steady = (v: number): Int16Array => new Int16Array(160).fill(v);

describe('LiveQueue and the garbage collector', () => {
  // A frame that left the queue must not stay referenced by it: held until the next compaction it
  // outlived the young generation, so every frame was promoted and major collections stalled calls.

  /** Pushes three frames, takes out two (one played, one over the cap); weak references to all three. */
  function fill(q: LiveQueue<F>): { played: WeakRef<F>; overflowed: WeakRef<F>; queued: WeakRef<F> } {
    const frames = [0, 1, 2].map((n) => ({ n, loud: true }));
    frames.forEach((f) => q.push(f));
    const played = q.shift();
    expect(played?.n).toBe(1); // frame 0 went over the cap of 2
    return { overflowed: new WeakRef(defined(frames[0])), played: new WeakRef(defined(frames[1])), queued: new WeakRef(defined(frames[2])) };
  }

  it('keeps no reference to frames that were played or dropped over the cap', async () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 0, maxFrames: 2 });
    const refs = fill(q);
    await collectGarbage();
    expect(refs.played.deref()).toBeUndefined();
    expect(refs.overflowed.deref()).toBeUndefined();
    expect(refs.queued.deref()?.n).toBe(2); // still queued: kept
    expect(q.shift()?.n).toBe(2);
  });
});

describe('frameEnergy', () => {
  it('hears every sample: a 1 kHz tone (zero at every 4th sample at 8 kHz) is loud, not silence', () => {
    expect(frameEnergy(tone1k(12000))).toBeGreaterThan(SILENT_FRAME_ENERGY);
    expect(frameEnergy(tone1k(12000))).toBeGreaterThan(frameEnergy(steady(8)) * 1000);
    expect(frameEnergy(steady(8))).toBeLessThanOrEqual(SILENT_FRAME_ENERGY);
    expect(frameEnergy(new Int16Array(0))).toBe(0);
  });

  it('ranks frames by level: -40 dBFS speech above the -50 dBFS silence line, -60 dBFS below', () => {
    const at = (db: number) => steady(Math.round(32768 * 10 ** (db / 20)));
    expect(frameEnergy(at(-40))).toBeGreaterThan(SILENT_FRAME_ENERGY);
    expect(frameEnergy(at(-60))).toBeLessThan(SILENT_FRAME_ENERGY);
  });
});

describe('LiveQueue with PCM frames', () => {
  // The media bench's socket→RTP pattern: a 1 kHz marker every 25 frames among quiet ones, a
  // start-up backlog, then one frame per tick; convergence runs at each window's end (10 ticks here:
  // twice the 4-frame burst). Every phase of the marker against the window end is tried, so a marker
  // is queued at a window's end in some.
  it('keeps every loud frame through convergence, whatever the phase of the window end', () => {
    for (let phase = 0; phase < 25; phase++) {
      const q = new LiveQueue<{ n: number; loud: boolean; pcm: Int16Array }>((f) => frameEnergy(f.pcm), { targetFrames: 1, windowTicks: 50, maxFrames: 15 });
      let n = 0;
      const loudIn: number[] = [];
      const loudOut: number[] = [];
      const push = () => {
        const loud = (n + phase) % 25 === 0;
        if (loud) loudIn.push(n);
        q.push({ n: n++, loud, pcm: loud ? tone1k(12000) : steady(8) });
      };
      for (let t = 0; t < 300; t++) {
        for (let k = t === 0 ? 4 : t % 60 === 30 ? 3 : 1; k > 0; k--) push(); // a start-up burst, then a burst every 1.2 s
        const f = q.shift();
        if (f?.loud) loudOut.push(f.n);
        q.endTick();
      }
      for (let f = q.shift(); f; f = q.shift()) if (f.loud) loudOut.push(f.n);
      expect(q.stats.trimmed, `phase ${phase}`).toBeGreaterThan(0);
      expect(loudOut, `phase ${phase}`).toEqual(loudIn);
    }
  });
});
