// The shared media clock: ticks keep to the 20 ms grid even when listeners come and go inside a
// tick (a pacer woken by a leg's frame joins the tick it was woken in), and a throwing listener is
// reported, not fatal. Fake timers: deterministic.
import dgram from 'node:dgram';
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
});
