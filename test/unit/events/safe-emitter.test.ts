// SafeEmitter: every listener runs even when one throws, once() and removal behave as EventEmitter's.
import { describe, expect, it } from 'vitest';
import { SafeEmitter } from '../../../src/events/index.js';

interface Events {
  frame: [number];
  error: [Error];
}

describe('SafeEmitter.safeEmit', () => {
  it('calls every listener in order, hands a thrown error to the hook and carries on', () => {
    const e = new SafeEmitter<Events>();
    const calls: string[] = [];
    const errors: [unknown, string][] = [];
    e.onListenerError((err, event) => errors.push([err, event]));
    e.on('frame', (n) => calls.push(`a${n}`));
    e.on('frame', () => {
      throw new Error('faulty');
    });
    e.on('frame', (n) => calls.push(`c${n}`));
    expect(e.safeEmit('frame', 1)).toBe(true);
    expect(calls).toEqual(['a1', 'c1']);
    expect(errors).toHaveLength(1);
    expect((errors[0]?.[0] as Error).message).toBe('faulty');
    expect(errors[0]?.[1]).toBe('frame');
  });

  it('with a single listener, calls it with the arguments and `this` the emitter; a throwing one goes to the hook', () => {
    const e = new SafeEmitter<Events>();
    let seen: { n: number; self: unknown } | null = null;
    e.on('frame', function (this: unknown, n) {
      seen = { n, self: this };
    });
    e.safeEmit('frame', 7);
    expect(seen).toEqual({ n: 7, self: e });
    const lone = new SafeEmitter<Events>();
    const errors: string[] = [];
    lone.onListenerError((_err, event) => errors.push(event));
    lone.on('frame', () => {
      throw new Error('x');
    });
    expect(() => lone.safeEmit('frame', 1)).not.toThrow();
    expect(errors).toEqual(['frame']);
  });

  it('runs a once() listener once, and every listener of the emit even when one removes another', () => {
    const e = new SafeEmitter<Events>();
    const calls: string[] = [];
    e.once('frame', (n) => calls.push(`once${n}`));
    const second = (n: number): void => {
      calls.push(`second${n}`);
    };
    e.on('frame', (n) => {
      calls.push(`remover${n}`);
      e.off('frame', second);
    });
    e.on('frame', second);
    e.safeEmit('frame', 1);
    e.safeEmit('frame', 2);
    expect(calls).toEqual(['once1', 'remover1', 'second1', 'remover2']);
    expect(e.listenerCount('frame')).toBe(1);
  });

  it("answers false without listeners, and drops an 'error' nobody listens to instead of throwing", () => {
    const e = new SafeEmitter<Events>();
    expect(e.safeEmit('frame', 1)).toBe(false);
    expect(e.safeEmit('error', new Error('nobody listens'))).toBe(false);
    e.on('frame', () => {});
    e.removeAllListeners('frame');
    expect(e.safeEmit('frame', 1)).toBe(false);
  });
});

describe('SafeEmitter.callSink', () => {
  /** A subclass with one sink in a field, as RtpEndpoint's frame sink and LiveSession's tap. */
  class WithSink extends SafeEmitter<Events> {
    sink: ((v: number) => void) | null = null;
    give(v: number): void {
      this.callSink(this.sink, v, 'frame');
    }
  }

  it('hands the value to the sink, does nothing without one, and reports a throw to the hook instead of throwing', () => {
    const e = new WithSink();
    const failures: [unknown, string][] = [];
    e.onListenerError((err, event) => failures.push([err, event]));
    e.give(1); // no sink yet
    const got: number[] = [];
    e.sink = (v) => got.push(v);
    e.give(2);
    expect(got).toEqual([2]);
    const boom = new Error('bad sink');
    e.sink = () => {
      throw boom;
    };
    expect(() => e.give(3)).not.toThrow();
    expect(failures).toEqual([[boom, 'frame']]);
  });
});
