// The overload guard: overloaded as soon as a window's share of late clock runs is over the limit, clear
// again only after windows in a row at or under it; an idle clock is never overloaded, a starved one
// (few runs, each catching up a stall) is, and a guard at 0 is off.
import { describe, expect, it } from 'vitest';
import { OverloadGuard } from '../../../src/media/index.js';

/** A clock's running totals, moved by hand a window at a time. */
function counts() {
  const c = { runs: 0, lateRuns: 0, listenerCount: 1 };
  return { c, window: (runs: number, late: number) => ((c.runs += runs), (c.lateRuns += late)) };
}

describe('OverloadGuard', () => {
  it('turns overloaded on a late window and clears after three in a row at or under the limit', () => {
    const { c, window } = counts();
    const changes: [boolean, number][] = [];
    const guard = new OverloadGuard(c, { latePercent: 5, onChange: (o, p) => changes.push([o, p]) });
    const states: boolean[] = [];
    for (const late of [0, 10, 12, 0, 0, 30, 0, 10, 0, 0]) {
      window(200, late);
      guard.sample();
      states.push(guard.overloaded);
    }
    // 10 of 200 is exactly 5 %: not over it. 12 is; then two clean, 30 again (the count restarts), three clean.
    expect(states).toEqual([false, false, true, true, true, true, true, true, false, false]);
    expect(changes).toEqual([
      [true, 6],
      [false, 0],
    ]);
    expect(guard.view().overloads).toBe(1);
  });

  it('clears at once when the clock stops ticking (no live media), and ignores a guard turned off', () => {
    const { c, window } = counts();
    const guard = new OverloadGuard(c, { latePercent: 1 });
    window(200, 100);
    guard.sample();
    expect(guard.overloaded).toBe(true);
    window(3, 0); // the last calls ended: the clock stopped
    c.listenerCount = 0;
    guard.sample();
    expect(guard.overloaded).toBe(false);
    expect(guard.lastLatePercent).toBe(0);

    const off = new OverloadGuard(c, { latePercent: 0 });
    window(200, 200);
    off.sample();
    expect(off.enabled).toBe(false);
    expect(off.overloaded).toBe(false);
    expect(off.start()).toBe(off); // never samples: no timer is left behind
    off.stop();
  });

  it('takes a ticking clock with few runs for starved, not idle: each run caught up a stall', () => {
    const { c, window } = counts();
    const guard = new OverloadGuard(c, { latePercent: 5 });
    window(200, 100);
    guard.sample();
    expect(guard.overloaded).toBe(true);
    // A loop so busy that a run's catch-up takes most of a second: few runs, all late. It stays overloaded.
    for (const [runs, late] of [
      [3, 3],
      [0, 0],
      [2, 2],
    ]) {
      window(runs!, late!);
      guard.sample();
      expect(guard.overloaded).toBe(true);
    }
    expect(guard.lastLatePercent).toBe(100);
    // A clock that has just started (its first listener came late in the window) is not late.
    const fresh = new OverloadGuard(c, { latePercent: 5 });
    window(4, 0);
    fresh.sample();
    expect(fresh.overloaded).toBe(false);
  });

  it('reads the share of each window since the last, not since start', () => {
    const { c, window } = counts();
    window(100_000, 0); // a long quiet history before the guard
    const guard = new OverloadGuard(c, { latePercent: 2 });
    window(200, 10);
    guard.sample();
    expect(guard.lastLatePercent).toBe(5);
    expect(guard.overloaded).toBe(true);
  });

  it('turns overloaded while the event loop is busy over its limit, though the clock keeps time, and not while no media runs', () => {
    const { c, window } = counts();
    let busy = 0;
    const guard = new OverloadGuard(c, { latePercent: 5, loopBusyPercent: 85, loopBusy: () => busy });
    const states: boolean[] = [];
    for (const share of [0.6, 0.84, 0.9, 0.8, 0.8, 0.8]) {
      busy = share;
      window(200, 0);
      guard.sample();
      states.push(guard.overloaded);
    }
    expect(states).toEqual([false, false, true, true, true, false]);
    expect(guard.view()).toMatchObject({ late_percent: 0, loop_busy_percent: 80, overloads: 1 });
    // A loop busy with no live media (starting up, say) turns nothing away.
    c.listenerCount = 0;
    busy = 0.99;
    window(0, 0);
    guard.sample();
    expect(guard.overloaded).toBe(false);
    // The loop's limit alone enables the guard.
    expect(new OverloadGuard(c, { latePercent: 0, loopBusyPercent: 85, loopBusy: () => 0 }).enabled).toBe(true);
  });
});
