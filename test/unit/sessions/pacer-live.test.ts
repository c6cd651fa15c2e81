// The session's output pacer with live (bridged) audio from another clock or from a chunking
// socket client: order kept, nothing lost while in step, backlog bounded and converging.
// Hand-driven clock: deterministic, no timers.
import { describe, expect, it } from 'vitest';
import { OutputPacer, MAX_LIVE_BACKLOG_FRAMES, type Frame } from '../../../src/sessions/index.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { collectGarbage } from '../../helpers/force-gc.js';
import { defined } from '../../helpers/defined.js';

function setup() {
  const clock = new ManualClock();
  const out: number[] = [];
  const pacer = new OutputPacer(clock).link((f: Frame) => {
    if (f.kind === 'playout' && f.to === 'agent') out.push(defined(f.pcm[0], 'first sample'));
  });
  let n = 1;
  const send = (frames: number, loud = true) => {
    for (let i = 0; i < frames; i++, n++)
      pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: new Int16Array(160).fill(loud ? n : n % 2) });
  };
  return { clock, out, pacer, send, sent: () => n - 1 };
}

describe('OutputPacer live audio', () => {
  it('passes frames from another 20 ms clock through in order, none lost, at most one waiting', () => {
    const { clock, out, pacer, send, sent } = setup();
    let maxDepth = 0;
    for (let t = 0; t < 1000; t++) {
      send(1);
      maxDepth = Math.max(maxDepth, pacer.liveQueued('agent'));
      clock.tick();
    }
    expect(out).toEqual(Array.from({ length: sent() }, (_, i) => i + 1));
    expect(maxDepth).toBe(1);
  });

  it('carries a socket client sending 200 ms chunks without loss or reordering', () => {
    const { clock, out, pacer, send, sent } = setup();
    for (let t = 0; t < 1000; t++) {
      if (t % 10 === 0) send(10);
      clock.tick();
    }
    expect(out).toEqual(Array.from({ length: sent() }, (_, i) => i + 1));
    expect(pacer.liveDrops()).toEqual({ trimmed: 0, trimmedVoiced: 0, overflowed: 0, underruns: 0 });
  });

  it('carries 100 ms chunks that arrive with jitter (early, late) without loss', () => {
    const { clock, out, send, sent } = setup();
    // Chunks of 5 frames every 5 ticks, each arriving 0–3 ticks late (deterministic pattern).
    const lateBy = [0, 2, 1, 3, 0, 1];
    const due: number[] = [];
    for (let c = 0; c < 200; c++) due.push(c * 5 + defined(lateBy[c % lateBy.length]));
    for (let t = 0; t < 1010; t++) {
      for (const d of due) if (d === t) send(5);
      clock.tick();
    }
    expect(out).toEqual(Array.from({ length: sent() }, (_, i) => i + 1));
  });

  it('drains a deep start-up backlog to about one frame instead of keeping it', () => {
    const { clock, pacer, send, out, sent } = setup();
    send(12, false); // a burst at start-up (a leg's jitter buffer catching up)
    const depths: number[] = [];
    for (let t = 0; t < 300; t++) {
      send(1);
      clock.tick();
      depths.push(pacer.liveQueued('agent'));
    }
    expect(depths[0]).toBeGreaterThan(10);
    expect(Math.max(...depths.slice(-100))).toBeLessThanOrEqual(1);
    // What came out is in order, and exactly the backlog (12 - 1 target + 1 waiting) went missing.
    const loud = out.filter((v) => v >= 13);
    for (let i = 1; i < loud.length; i++) expect(loud[i]).toBeGreaterThan(defined(loud[i - 1]));
    expect(out.length + pacer.liveQueued('agent') + pacer.liveDrops().trimmed).toBe(sent());
    expect(pacer.liveDrops().trimmed).toBeGreaterThan(0);
    expect(pacer.liveDrops().overflowed).toBe(0);
  });

  // Frames sent `arriveMs` into each 20 ms interval, the tick at its end; a start-up backlog of one frame.
  function timedRun(arriveMs: number, floor?: number) {
    const clock = new ManualClock();
    let nowMs = 0;
    const out: number[] = [];
    const pacer = new OutputPacer(clock, { liveMinMarginFrames: floor, now: () => nowMs }).link((f: Frame) => {
      if (f.kind === 'playout' && f.to === 'agent') out.push(defined(f.pcm[0], 'first sample'));
    });
    let n = 0;
    const send = () => pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: new Int16Array(160).fill(++n % 2) });
    send();
    for (let t = 0; t < 400; t++) {
      nowMs = t * 20 + arriveMs;
      send();
      nowMs = (t + 1) * 20;
      clock.tick();
    }
    return { pacer, out, sent: n };
  }

  it('lets frames that arrive in time wait only for the next tick once the margin has gone; a floor of one frame keeps it', () => {
    for (const floor of [0, 1]) {
      const { pacer, out, sent } = timedRun(8, floor);
      // Each tick now plays the frame sent just before it (floor 0), or the one before that (floor 1).
      expect(out.at(-1), `floor ${floor}`).toBe((sent - floor) % 2);
      expect(pacer.liveQueued('agent'), `floor ${floor}`).toBe(floor);
      expect(pacer.liveDrops(), `floor ${floor}`).toEqual({ trimmed: 1 - floor, trimmedVoiced: 0, overflowed: 0, underruns: 0 });
    }
  });

  it('keeps the margin for frames that arrive just before the tick, which the smallest lateness would make miss it', () => {
    const { pacer, out, sent } = timedRun(18);
    expect(pacer.liveMargin('agent')).toBe(1);
    expect(out.at(-1)).toBe((sent - 1) % 2);
    expect(pacer.liveDrops()).toEqual({ trimmed: 0, trimmedVoiced: 0, overflowed: 0, underruns: 0 });
  });

  it('never holds more than the hard cap after a stall', () => {
    const { clock, pacer, send } = setup();
    send(40);
    expect(pacer.liveQueued('agent')).toBe(MAX_LIVE_BACKLOG_FRAMES);
    clock.tick();
    expect(pacer.liveQueued('agent')).toBe(MAX_LIVE_BACKLOG_FRAMES - 1);
  });

  it('mixes live audio with synthesized speech due for the same listener in the same tick', () => {
    const clock = new ManualClock();
    const got: Frame[] = [];
    const pacer = new OutputPacer(clock).link((f: Frame) => got.push(f));
    pacer.process({ kind: 'tts_audio', to: 'agent', speaker: 'translated_customer', pcm: new Int16Array(160).fill(100) });
    pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: new Int16Array(160).fill(50) });
    clock.tick();
    const p = got.filter((f) => f.kind === 'playout');
    expect(p).toHaveLength(1);
    expect((p[0] as { pcm: Int16Array }).pcm[0]).toBe(150);
  });

  // The media bench's socket→RTP markers: a 1 kHz tone frame every 25 frames among quiet ones, a
  // start-up backlog that convergence removes at the window's end. The tone is zero at every 4th
  // sample; it must not be taken for the quietest frame. Every phase of marker against window end.
  it('keeps every loud marker frame through convergence, removing quiet ones instead', () => {
    const tone = Int16Array.from({ length: 160 }, (_, i) => Math.round(12000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
    for (let phase = 0; phase < 25; phase++) {
      const clock = new ManualClock();
      const played: Int16Array[] = [];
      const pacer = new OutputPacer(clock).link((f: Frame) => {
        if (f.kind === 'playout' && f.to === 'agent') played.push(f.pcm);
      });
      let n = 0;
      let loudSent = 0;
      const send = (frames: number) => {
        for (let i = 0; i < frames; i++, n++) {
          const loud = (n + phase) % 25 === 0;
          if (loud) loudSent++;
          pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: loud ? tone : new Int16Array(160).fill(8) });
        }
      };
      send(4); // a start-up backlog: 3 frames above the target
      for (let t = 0; t < 400; t++) {
        send(1);
        clock.tick();
      }
      clock.tick(pacer.liveQueued('agent'));
      expect(pacer.liveDrops().trimmed, `phase ${phase}`).toBe(3);
      expect(pacer.liveDrops().trimmedVoiced, `phase ${phase}`).toBe(0);
      expect(played.filter((f) => f === tone).length, `phase ${phase}`).toBe(loudSent);
      pacer.close();
    }
  });

  // Played audio must die young: the queues held played frames until their next compaction (up to
  // 1.3 s of live audio, 5 s of speech), long enough to be promoted to old space.
  it('keeps no reference to played audio, live or synthesized', async () => {
    const clock = new ManualClock();
    const pacer = new OutputPacer(clock).link(() => {});
    const buffers = ((): WeakRef<ArrayBuffer>[] => {
      const speech = new Int16Array(160 * 3).fill(100);
      const live = new Int16Array(160).fill(50);
      pacer.process({ kind: 'tts_audio', to: 'agent', speaker: 'translated_customer', pcm: speech });
      pacer.process({ kind: 'output_audio', to: 'agent', speaker: 'customer_original', pcm: live });
      return [new WeakRef(speech.buffer), new WeakRef(live.buffer)];
    })();
    for (let t = 0; t < 4; t++) clock.tick();
    await collectGarbage();
    expect(buffers.map((b) => b.deref())).toEqual([undefined, undefined]);
  });
});
