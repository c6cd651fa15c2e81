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

  it('keeps order and removes the quietest when the frames wrap around the end of its ring', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 1, windowTicks: 1, maxFrames: 6, silenceEnergy: 10 });
    for (let n = 0; n < 4; n++) q.push({ n, loud: true });
    for (let k = 0; k < 4; k++) q.shift(); // the oldest slot is now the fifth of six
    for (let n = 4; n < 10; n++) q.push({ n, loud: n !== 5 && n !== 8 });
    q.push({ n: 10, loud: true }); // over the cap: 4 goes
    expect(q.stats.overflowed).toBe(1);
    expect(q.endTick()).toBe(2); // a one-tick window: 6 queued, target 1; the silent ones go first
    const left: number[] = [];
    for (let f = q.shift(); f; f = q.shift()) left.push(f.n);
    expect(left).toEqual([6, 7, 9, 10]);
    q.push({ n: 11, loud: true });
    expect(q.shift()!.n).toBe(11);
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

describe('LiveQueue, adaptive margin', () => {
  const adaptive = (): LiveQueue<F> => new LiveQueue<F>(energy, { targetFrames: 1, minTargetFrames: 0, maxTargetFrames: 4 });
  const quiet = () => false;
  /**
   * Frame k of a 20 ms producer arrives at k * 20 + lateMs(k) ms; tick t releases at t * 20 ms, after
   * everything that arrived up to then (a frame arriving exactly on the tick makes it).
   */
  const arrivingAt = (lateMs: (k: number) => number) => {
    let k = 0;
    return (t: number): number => {
      let n = 0;
      while (k * 20 + lateMs(k) <= t * 20) {
        k++;
        n++;
      }
      return n;
    };
  };

  it('drops its one frame of margin after a steady spell, when frames arrive in time', () => {
    const q = adaptive();
    // A start-up backlog of one frame: the margin the queue starts with holds it.
    const { out, produced, depths } = run(q, 600, (t) => (t === 0 ? 2 : 1), quiet);
    expect(depths.slice(10, 45).every((d) => d === 1)).toBe(true);
    expect(q.targetFrames).toBe(0);
    expect(depths.slice(-300).every((d) => d === 0)).toBe(true);
    // One quiet frame went (the margin's), nothing else; the rest in order.
    expect(q.stats).toEqual({ trimmed: 1, trimmedVoiced: 0, overflowed: 0, underruns: 0 });
    expect(out.length + q.length + 1).toBe(produced);
    for (let i = 1; i < out.length; i++) expect(defined(out[i])).toBeGreaterThan(defined(out[i - 1]));
  });

  it('grows a frame when late frames repeat, not for a lone one, and never past its ceiling', () => {
    const q = adaptive();
    run(q, 300, () => 1, quiet); // settled at no margin
    expect(q.targetFrames).toBe(0);
    // One frame 10 ms late: its tick finds nothing (an underrun). A lone one: no margin comes back, and
    // the frame of delay the gap left goes again (silence first).
    const lone = run(
      q,
      300,
      arrivingAt((k) => (k === 5 ? 10 : 0)),
      quiet,
    );
    expect(q.stats.underruns).toBe(1);
    expect(q.targetFrames).toBe(0);
    expect(lone.depths.slice(-200).every((d) => d === 0)).toBe(true);
    // Late again 6 s on (lone again), then half a second later (a repeat within 2 s): a frame of margin,
    // which absorbs the same lateness 200 ms after that.
    run(
      q,
      250,
      arrivingAt((k) => (k === 200 || k === 225 || k === 235 ? 10 : 0)),
      quiet,
    );
    expect(q.stats.underruns).toBe(3);
    expect(q.targetFrames).toBe(1);
    // A second in time, and it shrinks back.
    run(q, 100, () => 1, quiet);
    expect(q.targetFrames).toBe(0);
    expect(q.stats.underruns).toBe(3);
    // A 40 ms hiccup on the way every second (two ticks without a frame, then three at once): a frame of
    // margin does not cover it, and the lateness repeats within 10 s, so the margin grows to two frames,
    // which do. Its tries to shrink back fail, further and further apart: 60 hiccups, a handful of gaps.
    const hiccups = (gapTicks: number) => (t: number) => (t % 50 >= 1 && t % 50 <= gapTicks ? 0 : t % 50 === gapTicks + 1 ? gapTicks + 1 : 1);
    const q2 = adaptive();
    run(q2, 3000, hiccups(2), quiet);
    expect(q2.targetFrames).toBe(2);
    const settled = q2.stats.underruns;
    expect(settled).toBeGreaterThan(1);
    expect(settled).toBeLessThanOrEqual(8);
    run(q2, 1000, hiccups(2), quiet);
    expect(q2.stats.underruns - settled).toBeLessThanOrEqual(1);
    // 100 ms hiccups: the margin stops at its ceiling of four frames.
    const q3 = adaptive();
    run(q3, 3000, hiccups(5), quiet);
    expect(q3.targetFrames).toBe(4);
  });

  it('shrinks back from its ceiling a frame at a time, each step once the last took effect, on timed waits', () => {
    const q = adaptive();
    // 100 ms hiccups every half second raise the margin to its ceiling (no steady spell in between).
    run(q, 130, (t) => (t % 25 >= 1 && t % 25 <= 5 ? 0 : t % 25 === 6 ? 6 : 1), quiet);
    expect(q.targetFrames).toBe(4);
    const { underruns, trimmed } = q.stats;
    // Standing at that margin (a burst that the margin keeps), then frames arrive 8 ms into every 20 ms
    // tick, timed: the waits leave room, so the margin steps down and convergence lets the backlog go.
    const steps: { tick: number; target: number; depthBefore: number }[] = [];
    let n = 0;
    for (let i = 0; i < 4; i++) q.push({ n: n++, loud: false }, 0);
    for (let t = 0; t < 400; t++) {
      q.push({ n: n++, loud: false }, t * 20 + 8);
      const depthBefore = q.length - 1;
      const before = q.targetFrames;
      q.shift((t + 1) * 20);
      q.endTick();
      if (q.targetFrames !== before) steps.push({ tick: t, target: q.targetFrames, depthBefore });
    }
    expect(steps.map((s) => s.target)).toEqual([3, 2, 1, 0]);
    expect(q.length).toBe(0);
    expect(q.stats.underruns).toBe(underruns);
    expect(q.stats.trimmedVoiced).toBe(0);
    expect(q.stats.trimmed - trimmed).toBe(4);
    // The first after a 1 s steady spell, the rest within half a second of it; never two before the
    // frame the last one let go had gone.
    expect(defined(steps[0]).tick).toBeGreaterThanOrEqual(49);
    expect(defined(steps[3]).tick - defined(steps[0]).tick).toBeLessThan(25 + 3 * 20);
    for (let i = 1; i < steps.length; i++) expect(defined(steps[i]).depthBefore).toBeLessThanOrEqual(defined(steps[i - 1]).target);
  });

  it('lets go of margin the queue does not stand at, however little room the waits leave', () => {
    const q = adaptive();
    run(q, 130, (t) => (t % 25 >= 1 && t % 25 <= 5 ? 0 : t % 25 === 6 ? 6 : 1), quiet);
    expect(q.targetFrames).toBe(4);
    // The producer is back in time with nothing standing; its frames come 2 ms before the tick.
    for (let t = 0; t < 200; t++) {
      q.push({ n: t, loud: false }, t * 20 + 18);
      q.shift((t + 1) * 20);
      q.endTick();
    }
    expect(q.targetFrames).toBe(0);
  });

  it('backs off when its frames straddle the tick: a glitch now and then, not every few seconds', () => {
    // Arrivals 19–22 ms after their grid point: about one in four misses its tick by a hair.
    const q = adaptive();
    const lateMs = (k: number): number => 19 + ((k * 7919) % 4);
    const { out, produced } = run(q, 3000, arrivingAt(lateMs), quiet);
    // A fixed shrink every 3 s would have failed about 19 times in these 60 s; doubling waits fail ≤ 5.
    expect(q.stats.underruns).toBeGreaterThanOrEqual(1);
    expect(q.stats.underruns).toBeLessThanOrEqual(6);
    // Nothing voiced lost, order kept.
    expect(q.stats.trimmedVoiced + q.stats.overflowed).toBe(0);
    expect(out.length + q.length + q.stats.trimmed).toBe(produced);
    for (let i = 1; i < out.length; i++) expect(defined(out[i])).toBeGreaterThan(defined(out[i - 1]));
  });

  it('a fixed queue counts underruns and keeps its target', () => {
    const q = new LiveQueue<F>(energy, { targetFrames: 0 });
    // A 20 ms hiccup every 400 ms: each one leaves a tick empty.
    run(q, 200, (t) => (t % 20 === 5 ? 0 : t % 20 === 6 ? 2 : 1), quiet);
    expect(q.stats.underruns).toBe(10);
    expect(q.targetFrames).toBe(0);
  });

  it('takes a pause of the producer (longer than 100 ms) and an interruption for what they are, not lateness', () => {
    const q = adaptive();
    run(q, 300, (t) => (t >= 100 && t < 110 ? 0 : 1), quiet); // 200 ms of nothing
    q.clear();
    run(q, 10, (t) => (t < 2 ? 0 : 1), quiet); // resumes two ticks after the clear
    expect(q.stats.underruns).toBe(0);
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
