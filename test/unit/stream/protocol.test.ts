// The socket message parser at the edge (SPEC "Streaming socket messages").
import { describe, expect, it } from 'vitest';
import { parseClientMessage } from '../../../src/stream/index.js';
import { MediaClock } from '../../../src/sessions/index.js';
import { defined } from '../../helpers/defined.js';

const parse = (m: unknown, max = 1000) => parseClientMessage(Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)), max);
const audio = (a: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'audio.input',
  audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: 'AAEC', ...a },
  ...extra,
});

describe('parseClientMessage', () => {
  it('parses the three client messages; speaker defaults to customer', () => {
    expect(parse({ type: 'ping' })).toEqual({ ok: true, msg: { type: 'ping' } });
    expect(parse({ type: 'session.end' })).toEqual({ ok: true, msg: { type: 'session.end' } });
    const r = parse(audio({}, { sequence: 3, timestamp_ms: 60 }));
    expect(r).toEqual({ ok: true, msg: { type: 'audio.input', speaker: 'customer', payload: Buffer.from([0, 1, 2]), sequence: 3, timestampMs: 60 } });
    expect(parse(audio({}, { speaker: 'agent' }))).toMatchObject({ ok: true, msg: { speaker: 'agent' } });
  });

  it('names the error code for each kind of bad message', () => {
    expect(parse('x'.repeat(1001))).toMatchObject({ ok: false, code: 'message_too_large' });
    expect(parse('{')).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parse('null')).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parse({ type: 7 })).toMatchObject({ ok: false, code: 'invalid_message' });
    expect(parse({ type: 'audio.output' })).toMatchObject({ ok: false, code: 'invalid_message' });
    for (const speaker of ['super visor', 'x'.repeat(33), '', 7, { id: 1 }]) {
      expect(parse(audio({}, { speaker })), JSON.stringify(speaker)).toMatchObject({ ok: false, code: 'invalid_message' });
    }
    // A bounded channel id is accepted and left for the connection to map to a party.
    expect(parse(audio({}, { speaker: 'sip:leg-1' }))).toMatchObject({ ok: true, msg: { speaker: { channel: 'sip:leg-1' } } });
    expect(parse(audio({}, { speaker: 'x'.repeat(32) }))).toMatchObject({ ok: true, msg: { speaker: { channel: 'x'.repeat(32) } } });
    expect(parse(audio({ encoding: 'linear16' }))).toMatchObject({ ok: false, code: 'invalid_audio_format' });
    expect(parse(audio({ sample_rate_hz: 8001 }))).toMatchObject({ ok: false, code: 'invalid_audio_format' });
    expect(parse(audio({ channels: 2 }))).toMatchObject({ ok: false, code: 'invalid_audio_format' });
    expect(parse(audio({ payload: 'AAE' }))).toMatchObject({ ok: false, code: 'invalid_audio_format' });
    expect(parse(audio({ payload: '@@@@' }))).toMatchObject({ ok: false, code: 'invalid_audio_format' });
  });
});

describe('MediaClock', () => {
  it('ticks every period for its listeners and stops when they leave', async () => {
    const clock = new MediaClock(5);
    const ticks: number[] = [];
    let stop = () => {};
    await new Promise<void>((resolve) => {
      // Leaves inside its tenth tick: on a busy host the clock catches up several ticks in one loop
      // turn, and a listener that left only after its promise settled saw an eleventh.
      stop = clock.subscribe((n) => {
        ticks.push(n);
        if (ticks.length === 10) {
          stop();
          resolve();
        }
      });
    });
    stop();
    expect(ticks).toEqual(Array.from({ length: 10 }, (_, i) => defined(ticks[0], 'first tick') + i));
    expect(clock.listenerCount).toBe(0);
    clock.stop();
  });
});

describe('audio payload decoding', () => {
  it('accepts exact base64 and refuses stray characters, whitespace and bad padding', () => {
    const payloadOf = (payload: string) => parse(audio({ payload }));
    expect(payloadOf(Buffer.from([1, 2, 3, 4, 5]).toString('base64'))).toMatchObject({ ok: true, msg: { payload: Buffer.from([1, 2, 3, 4, 5]) } });
    expect(payloadOf('')).toMatchObject({ ok: true });
    for (const bad of ['AA A', 'AA\nA', 'A===', '!!!!', 'AAAAA', 'AA=A']) expect(payloadOf(bad)).toMatchObject({ ok: false, code: 'invalid_audio_format' });
  });
});
