import { describe, expect, it } from 'vitest';
import { IngressQueue } from '../../../src/telephony/sip/ingress-queue.js';

/** Keeps the thread busy for `ms`, as parsing and handling a datagram does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const untilIdle = (q: IngressQueue): Promise<void> =>
  new Promise((resolve) => {
    const check = () => (q.depth === 0 ? resolve() : setImmediate(check));
    check();
  });

describe('SIP ingress queue', () => {
  it('handles every datagram, in order, and gives the loop back between turns once the budget is spent', async () => {
    const q = new IngressQueue({ budgetMs: 3, maxQueued: 100, onError: (err) => expect.fail(String(err)) });
    const order: string[] = [];
    // A timer that falls due while the first datagram is handled stands for the media clock: it runs
    // between turns, not after all ten (20 ms of work).
    let timerRan!: Promise<void>;
    q.push(() => {
      timerRan = new Promise((resolve) => setTimeout(() => resolve(void order.push('timer')), 0));
      busy(2);
      order.push('datagram 0');
    });
    for (let i = 1; i < 10; i++) q.push(() => (busy(2), order.push(`datagram ${i}`)));
    await untilIdle(q);
    await timerRan;
    expect(order.filter((o) => o !== 'timer')).toEqual(Array.from({ length: 10 }, (_, i) => `datagram ${i}`));
    expect(order.indexOf('timer')).toBeLessThan(order.indexOf('datagram 9'));
  });

  it('with no budget handles each datagram at once, as read', () => {
    const q = new IngressQueue({ budgetMs: 0, maxQueued: 1, onError: () => undefined });
    const handled: number[] = [];
    for (let i = 0; i < 3; i++) expect(q.push(() => handled.push(i))).toBe(true);
    expect(handled).toEqual([0, 1, 2]);
    expect(q.depth).toBe(0);
  });

  it('drops what comes while it is full, and takes datagrams again once it has room', async () => {
    const q = new IngressQueue({ budgetMs: 3, maxQueued: 2, onError: () => undefined });
    const handled: number[] = [];
    expect([1, 2, 3].map((i) => q.push(() => handled.push(i)))).toEqual([true, true, false]);
    await untilIdle(q);
    expect(q.push(() => handled.push(4))).toBe(true);
    await untilIdle(q);
    expect(handled).toEqual([1, 2, 4]);
  });

  it('forgets what waits once cleared (its transport closed)', async () => {
    const q = new IngressQueue({ budgetMs: 3, maxQueued: 10, onError: () => undefined });
    const handled: number[] = [];
    q.push(() => handled.push(1));
    q.clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(handled).toEqual([]);
    expect(q.depth).toBe(0);
  });

  it('reports a handler that throws and goes on with the next datagram', async () => {
    const errors: unknown[] = [];
    const q = new IngressQueue({ budgetMs: 3, maxQueued: 10, onError: (err) => errors.push(err) });
    const handled: number[] = [];
    q.push(() => {
      throw new Error('bad datagram');
    });
    q.push(() => handled.push(2));
    await untilIdle(q);
    expect(errors.map(String)).toEqual(['Error: bad datagram']);
    expect(handled).toEqual([2]);
  });
});
