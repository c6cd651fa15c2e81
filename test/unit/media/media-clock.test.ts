// The shared media clock: ticks keep to the 20 ms grid even when listeners come and go inside a
// tick (a pacer woken by a leg's frame joins the tick it was woken in), and a throwing listener is
// reported, not fatal. Fake timers: deterministic.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FollowingPhase, MediaClock, PlayoutPhase, playoutMoves, type TickSource } from '../../../src/media/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('MediaClock', () => {
  it('keeps 50 ticks per second while a listener unsubscribes and resubscribes inside ticks', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10);
    let ticks = 0;
    const steady = () => {
      ticks++;
      // Like a pacer: leave when drained, come back when woken (here: in the same tick).
      unsubPacer();
      unsubPacer = clock.subscribe(pacer);
    };
    let pacerCalls = 0;
    const pacer = () => {
      pacerCalls++;
      unsubPacer();
    };
    let unsubPacer = clock.subscribe(pacer);
    clock.subscribe(steady);
    vi.advanceTimersByTime(1000);
    expect(ticks).toBe(50);
    expect(pacerCalls).toBeGreaterThanOrEqual(50);
    // One timer, one tick grid: a resubscribe inside a tick must not start a second timer (which
    // also reset the grid, so that under load the clock lost ticks instead of catching up).
    expect(vi.getTimerCount()).toBe(1);
    clock.stop();
  });

  it('reports a throwing listener to the hook and keeps ticking the others', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10);
    const errors: unknown[] = [];
    clock.onListenerError((err) => errors.push(err));
    let good = 0;
    clock.subscribe(() => {
      throw new Error('listener fault');
    });
    clock.subscribe(() => good++);
    vi.advanceTimersByTime(100);
    expect(good).toBe(5);
    expect(errors).toHaveLength(5);
    expect(clock.listenerErrors).toBe(5);
    clock.stop();
  });

  it('runs late listeners after every ordinary listener of the same tick, even one that joined in it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10);
    const order: string[] = [];
    clock.subscribeLate((t) => order.push(`send${t}`));
    let joined: (() => void) | null = null;
    clock.subscribe((t) => {
      order.push(`leg${t}`);
      // Like a pacer woken by the leg's frame: it joins the tick in progress.
      joined ??= clock.subscribe((u) => order.push(`pacer${u}`));
    });
    vi.advanceTimersByTime(40);
    expect(order).toEqual(['leg1', 'pacer1', 'send1', 'leg2', 'pacer2', 'send2']);
    clock.stop();
  });

  it('runs the four phases in order (read, play out, pace, send) whatever order they subscribed in', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10);
    const order: string[] = [];
    clock.subscribePace((t) => order.push(`pacer${t}`));
    clock.subscribeLate((t) => order.push(`send${t}`));
    clock.subscribe((t) => order.push(`leg${t}`));
    clock.subscribeEarly((t) => order.push(`read${t}`));
    vi.advanceTimersByTime(40);
    expect(order).toEqual(['read1', 'leg1', 'pacer1', 'send1', 'read2', 'leg2', 'pacer2', 'send2']);
    clock.stop();
  });

  it('tells its listeners, and only them, that it is ticking', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10);
    const seen: boolean[] = [];
    clock.subscribeEarly(() => seen.push(clock.ticking));
    clock.subscribeLate(() => seen.push(clock.ticking));
    expect(clock.ticking).toBe(false);
    vi.advanceTimersByTime(40);
    expect(seen).toEqual([true, true, true, true]);
    expect(clock.ticking).toBe(false);
    clock.stop();
  });

  it('after a stall, ticks once the packets that arrived meanwhile are read (not before the loop reads its sockets)', async () => {
    // Real timers and a real socket: the order of the event loop's phases is what is tested.
    const rx = dgram.createSocket('udp4');
    const tx = dgram.createSocket('udp4');
    await new Promise<void>((res) => rx.bind(0, '127.0.0.1', () => res()));
    // Connected: a send then leaves at once (an unconnected one waits for an address lookup on the next
    // tick, which would put the packet after the stall, not in it).
    await new Promise<void>((res) => tx.connect(rx.address().port, '127.0.0.1', () => res()));
    let received = 0;
    rx.on('message', () => received++);
    const clock = new MediaClock(20, 10);
    const seen = await new Promise<number>((resolve) => {
      // 'arming': ticks of a catch-up run (a busy machine fires the timer late) that come before the stall are not the one tested.
      let phase: 'arm' | 'arming' | 'stalled' | 'done' = 'arm';
      clock.subscribe(() => {
        if (phase === 'arm') {
          phase = 'arming';
          // A stall outside the timers phase (here the check phase; in production a socket message or a
          // database reply): a packet lands during it, and the next tick is due before the loop polls again.
          setImmediate(() => {
            tx.send(Buffer.from([1]));
            const until = performance.now() + 45;
            while (performance.now() < until) {
              // busy: the event loop is stalled
            }
            phase = 'stalled';
          });
        } else if (phase === 'stalled') {
          phase = 'done';
          resolve(received);
        }
      });
    });
    clock.stop();
    rx.close();
    tx.close();
    expect(seen).toBe(1);
    expect(clock.deferredRuns).toBeGreaterThanOrEqual(1);
  });

  it('counts a run that a stall made late once, however many sub-ticks it caught up or skipped (what the overload guard reads)', async () => {
    // Real timers: a listener holds the loop for 300 ms, longer than the 200 ms the clock catches up.
    const clock = new MediaClock(20, 10, 4);
    let before = { runs: 0, late: 0 };
    let after = { runs: 0, late: 0 };
    await new Promise<void>((resolve) => {
      let calls = 0;
      clock.subscribe(() => {
        calls++;
        if (calls === 2) {
          before = { runs: clock.runs, late: clock.lateRuns };
          const until = performance.now() + 300;
          while (performance.now() < until) {
            // busy: the event loop is stalled
          }
        } else if (calls === 3) {
          // The run after the stall: it caught up 40 sub-ticks and skipped the rest.
          after = { runs: clock.runs, late: clock.lateRuns };
          resolve();
        }
      });
    });
    clock.stop();
    expect(after.runs - before.runs).toBe(1);
    expect(after.late - before.late).toBe(1);
    expect(clock.lateTicks).toBeGreaterThanOrEqual(1);
    expect(clock.runs).toBeGreaterThanOrEqual(clock.lateRuns);
  });

  it('with four sub-ticks, reads in every one and runs each phased listener once per frame in its own', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10, 4);
    const reads: number[] = [];
    const legRuns: [number, number][] = [];
    const unphased: number[] = [];
    clock.subscribeEarly((_t, sub) => reads.push(sub ?? -1));
    clock.subscribe((t, sub) => legRuns.push([t, sub ?? -1]), { phase: 2 });
    clock.subscribeLate((_t, sub) => unphased.push(sub ?? -1));
    vi.advanceTimersByTime(1000);
    expect(reads).toHaveLength(200);
    expect(reads.slice(0, 8)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
    // New, it runs at once (the first sub-tick), then in its own every frame.
    expect(legRuns[0]).toEqual([1, 0]);
    expect(legRuns.slice(1)).toHaveLength(50);
    expect(legRuns.slice(1).every(([t, sub], i) => sub === 2 && t === i + 1)).toBe(true);
    expect(unphased).toHaveLength(50);
    expect(unphased.every((sub) => sub === 0)).toBe(true);
    clock.stop();
  });

  it('moves a listener with its phase, 10 to 25 ms between runs, never twice in half a frame nor a frame skipped', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10, 4);
    const phase = { phase: 0 };
    const runsAt: number[] = [];
    // Moves both ways and by every step, some of them from inside a run, as a leg moves when it reads a late packet.
    const moves = [1, 3, 0, 2, 1, 0, 3, 2, 0, 1];
    let moved = 0;
    const move = (to: number) => {
      if (to !== phase.phase) moved++;
      phase.phase = to;
    };
    clock.subscribe(() => {
      runsAt.push(performance.now());
      if (runsAt.length % 5 === 0) move(moves[(runsAt.length / 5) % moves.length] ?? 0);
    }, phase);
    // And at reads, as a leg moves when a packet is read: a fixed pseudo-random sequence.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    clock.subscribeEarly(() => {
      if (next() < 0.05) move(Math.floor(next() * 4));
    });
    vi.advanceTimersByTime(2000);
    const gaps = runsAt.slice(1).map((t, i) => t - (runsAt[i] ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(25);
    // 100 frames: a move earlier adds a run, a move later takes one away, never more than one per move.
    expect(moved).toBeGreaterThan(20);
    expect(Math.abs(runsAt.length - 100)).toBeLessThanOrEqual(moved);
    clock.stop();
  });

  it('names the phase of the listener running, which a following phase takes up (never in a circle)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const clock = new MediaClock(20, 10, 4);
    const leg = { phase: 3 };
    const lane = new FollowingPhase();
    const sender = new FollowingPhase();
    const seen: (number | null)[] = [];
    clock.subscribe(() => {
      seen.push(clock.runningPhase?.phase ?? null);
      lane.follow(clock.runningPhase!);
    }, leg);
    clock.subscribePace(() => sender.follow(clock.runningPhase!), lane);
    clock.subscribeEarly(() => seen.push(clock.runningPhase?.phase ?? null));
    vi.advanceTimersByTime(20);
    // The leg, new, runs at once (in sub-tick 0), then in its own (3).
    expect(seen).toEqual([null, 3, null, null, null, 3]);
    expect(clock.runningPhase).toBeNull();
    expect([lane.phase, sender.phase]).toEqual([3, 3]);
    leg.phase = 1;
    expect([lane.phase, sender.phase]).toEqual([1, 1]);
    lane.follow(sender); // would follow itself through the sender: ignored
    expect(lane.phase).toBe(1);
    clock.stop();
  });
});

describe('PlayoutPhase', () => {
  /** A clock whose sub-ticks fall at every multiple of 5 ms, frames at every 20. */
  const grid: TickSource = {
    subscribe: () => () => {},
    subTicks: 4,
    phaseAt: (t) => Math.ceil(t / 5) % 4,
    subTickAt: (t) => Math.ceil(t / 5) * 5,
  };

  it('places a leg in the first sub-tick a margin after its arrivals, later at once on a late packet, back after a calm spell', () => {
    const placed = PlayoutPhase.on(grid)!;
    // Frame k (RTP timestamp 160 k) arrives 2 ms into its frame: played out 5 ms in, sub-tick 1.
    const arrive = (k: number, lateMs = 0) => placed.note(160 * k, 20 * k + 2 + lateMs);
    for (let k = 0; k < 10; k++) arrive(k, k % 2 ? 0.3 : 0);
    expect(placed.tickPhase.phase).toBe(1);
    const before = { ...playoutMoves };
    // 4 ms late: sub-tick 1 would come before it; the leg moves to sub-tick 2 (10 ms).
    arrive(10, 4);
    expect(placed.tickPhase.phase).toBe(2);
    // On time again: it stays while its sub-tick comes within a sub-tick and 2.5 ms of the edge...
    for (let k = 11; k < 20; k++) arrive(k);
    expect(placed.tickPhase.phase).toBe(2);
    // ...and goes back once a whole block of 50 packets after the one with the late packet came in time.
    for (let k = 20; k < 120; k++) arrive(k);
    expect(placed.tickPhase.phase).toBe(1);
    // Each move counted once, by its direction (the process-wide figure on /metrics).
    expect({ later: playoutMoves.later - before.later, earlier: playoutMoves.earlier - before.earlier }).toEqual({ later: 1, earlier: 1 });
  });

  it('stays where it is on 3 ms of jitter, at either side of a sub-tick', () => {
    for (const base of [0.5, 2, 3.5]) {
      const placed = PlayoutPhase.on(grid)!;
      let seed = 11;
      const jitter = () => 3 * ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
      const phases = new Set<number>();
      for (let k = 0; k < 1000; k++) {
        placed.note(160 * k, 20 * k + base + jitter());
        if (k >= 50) phases.add(placed.tickPhase.phase);
      }
      expect({ base, phases: [...phases] }).toEqual({ base, phases: [phases.values().next().value] });
    }
  });

  it('is not made on a clock without sub-ticks', () => {
    expect(PlayoutPhase.on({ ...grid, subTicks: 1 })).toBeNull();
    expect(PlayoutPhase.on(new MediaClock(20, 10))).toBeNull();
    expect(PlayoutPhase.on(new MediaClock(20, 10, 4))).not.toBeNull();
  });
});
