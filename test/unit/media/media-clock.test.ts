// The shared media clock: ticks keep to the 20 ms grid even when listeners come and go inside a
// tick (a pacer woken by a leg's frame joins the tick it was woken in), and a throwing listener is
// reported, not fatal. Fake timers: deterministic.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MediaClock } from '../../../src/media/index.js';

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
});
