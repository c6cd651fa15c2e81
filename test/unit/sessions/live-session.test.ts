// LiveSession with scripted engines and a manual clock: events, stored turns, legs, ready, close.
import { describe, expect, it, vi } from 'vitest';
import {
  LiveSession,
  type LiveSessionHooks,
  type PartyLeg,
  type SessionMode,
  type SessionOutput,
  type StoredTurn,
  type AudioTap,
  type TranscriptFinal,
} from '../../../src/sessions/index.js';
import type { Engines } from '../../../src/speech/index.js';
import { fakeEngines, loudFrame, quietFrame } from '../../helpers/fake-engines.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { defined } from '../../helpers/defined.js';

function makeSession(engines: Engines, opts: { awaitsLeg?: boolean; mode?: SessionMode } = {}) {
  const clock = new ManualClock();
  const stored: StoredTurn[] = [];
  const hooks: LiveSessionHooks = {
    firstAudio: vi.fn(),
    activity: vi.fn(),
    storeTurn: async (t) => {
      stored.push(t);
    },
  };
  const session = new LiveSession({
    id: 'sess_test',
    orgId: 'org_test',
    mode: opts.mode ?? 'bidirectional_translation',
    sourceLanguage: 'en',
    targetLanguage: 'es',
    voice: { speed: 1 },
    engines,
    defaultLanguage: 'en',
    clock,
    hooks,
    awaitsLeg: opts.awaitsLeg ?? false,
    vad: { hangoverMs: 100 },
  });
  return { session, clock, stored, hooks };
}

/** One utterance: 200 ms silence, 400 ms speech, 400 ms silence. */
function speak(session: LiveSession, party: 'agent' | 'customer'): void {
  for (let i = 0; i < 10; i++) session.pushAudio(party, quietFrame());
  for (let i = 0; i < 20; i++) session.pushAudio(party, loudFrame());
  for (let i = 0; i < 20; i++) session.pushAudio(party, quietFrame());
}

describe('LiveSession', () => {
  it("marks activity on each party's first frame and then once a second of its audio, not per frame", () => {
    const { engines } = fakeEngines([]);
    const { session, hooks } = makeSession(engines);
    for (let i = 0; i < 101; i++) session.pushAudio('agent', quietFrame());
    expect(hooks.activity).toHaveBeenCalledTimes(3); // frames 0, 50 and 100
    session.pushAudio('customer', quietFrame());
    expect(hooks.activity).toHaveBeenCalledTimes(4);
    session.noteActivity();
    expect(hooks.activity).toHaveBeenCalledTimes(5);
    session.close('test');
  });

  it('gives the tap every frame said, at its place on the timeline, until it is cleared; a throwing tap is reported, not thrown', () => {
    const { engines } = fakeEngines([]);
    const { session } = makeSession(engines);
    const taps: AudioTap[] = [];
    session.onTap((t) => taps.push(t));
    const frames = [quietFrame(), loudFrame(), quietFrame()];
    for (const f of frames) session.pushAudio('customer', f);
    expect(taps.map((t) => [t.side, t.origin, t.frame, t.atMs])).toEqual(frames.map((f, i) => ['customer', 'said', f, i * 20]));

    const failures: string[] = [];
    session.onListenerError((_err, event) => failures.push(event));
    session.onTap(() => {
      throw new Error('bad tap');
    });
    session.pushAudio('customer', quietFrame());
    expect(failures).toEqual(['tap']);

    session.onTap(null);
    session.pushAudio('customer', quietFrame());
    expect(taps).toHaveLength(3);
    expect(failures).toHaveLength(1);
    session.close('test');
  });

  it('turns an utterance into a final (sequence, translation), stores it, and speaks the translation', async () => {
    const { engines } = fakeEngines(['good morning', 'thank you']);
    const { session, clock, stored, hooks } = makeSession(engines);
    const finals: TranscriptFinal[] = [];
    const outputs: SessionOutput[] = [];
    session.on('final', (f) => finals.push(f));
    session.on('output', (o) => outputs.push(o as SessionOutput));
    speak(session, 'agent');
    expect(hooks.firstAudio).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(finals).toHaveLength(1));
    expect(finals[0]).toMatchObject({
      sequence: 1,
      speaker: 'agent',
      language: 'en',
      text: 'good morning',
      confidence: 0.9,
      translation: { language: 'es', text: '[es] good morning' },
    });
    await session.flushStore();
    expect(stored[0]).toMatchObject({ sequence: 1, text: 'good morning' });
    expect(defined(stored[0], 'stored turn').endTime).toBeGreaterThan(defined(stored[0], 'stored turn').startTime);
    await vi.waitFor(() => expect(session.queuedOutput('customer')).toBeGreaterThan(0));
    const queued = session.queuedOutput('customer');
    clock.tick(queued + 1);
    expect(outputs).toHaveLength(queued);
    expect(outputs.every((o) => o.to === 'customer' && o.speaker === 'translated_agent' && o.frame.length === 160)).toBe(true);
    speak(session, 'agent');
    await vi.waitFor(() => expect(finals).toHaveLength(2));
    expect(defined(finals[1], 'second final').sequence).toBe(2);
    session.close('test');
  });

  it('reports a failing engine as an error event and keeps running', async () => {
    const { engines, translator } = fakeEngines(['first', 'second']);
    const { session } = makeSession(engines);
    const errors: Array<{ code: string; message: string }> = [];
    const finals: TranscriptFinal[] = [];
    session.on('error', (e) => errors.push(e));
    session.on('final', (f) => finals.push(f));
    translator.fail = true;
    speak(session, 'agent');
    await vi.waitFor(() => expect(finals).toHaveLength(1));
    expect(errors[0]).toMatchObject({ code: 'engine_error' });
    expect(defined(errors[0], 'error').message).toMatch(/translation en->es/);
    expect(finals[0]).not.toHaveProperty('translation');
    translator.fail = false;
    speak(session, 'agent');
    await vi.waitFor(() => expect(finals).toHaveLength(2));
    expect(defined(finals[1], 'second final').translation?.text).toBe('[es] second');
    session.close('test');
  });

  it('sends output for a party with a leg to the leg; a session with phone routing is ready once a leg attaches', async () => {
    const { engines } = fakeEngines(['hello']);
    const { session, clock } = makeSession(engines, { awaitsLeg: true });
    expect(session.ready).toBe(false);
    const onReady = vi.fn();
    session.on('ready', onReady);
    const played: Int16Array[] = [];
    const leg: PartyLeg = { party: 'customer', kind: 'sip', playFrame: (f) => played.push(f), close: vi.fn() };
    const detach = session.attachLeg(leg);
    expect(session.ready).toBe(true);
    expect(onReady).toHaveBeenCalledTimes(1);
    const outputs: unknown[] = [];
    session.on('output', (o) => outputs.push(o));
    speak(session, 'agent');
    await vi.waitFor(() => expect(session.queuedOutput('customer')).toBeGreaterThan(0));
    clock.tick(3);
    expect(played).toHaveLength(3);
    expect(outputs).toHaveLength(0);
    detach();
    clock.tick(1);
    expect(outputs).toHaveLength(1);
    session.close('test');
    expect(leg.close).not.toHaveBeenCalled(); // detached before the end
  });

  it('close() is idempotent: one ended event, legs hung up, late engine results dropped', async () => {
    const { engines, stt } = fakeEngines(['never delivered']);
    const { session } = makeSession(engines);
    const leg: PartyLeg = { party: 'agent', kind: 'sip', playFrame: vi.fn(), close: vi.fn() };
    session.attachLeg(leg);
    const ended = vi.fn();
    const finals = vi.fn();
    session.on('ended', ended);
    session.on('final', finals);
    speak(session, 'customer'); // customer speaks Spanish: not transcribed by the fake (en only)
    for (let i = 0; i < 10; i++) session.pushAudio('agent', quietFrame());
    for (let i = 0; i < 20; i++) session.pushAudio('agent', loudFrame());
    session.close('explicit_end');
    session.close('again');
    expect(ended).toHaveBeenCalledTimes(1);
    expect(ended).toHaveBeenCalledWith({ reason: 'explicit_end' });
    expect(leg.close).toHaveBeenCalledWith('explicit_end');
    expect(stt.streams.every((s) => s.closed)).toBe(true);
    expect(session.reason).toBe('explicit_end');
    session.pushAudio('agent', loudFrame()); // ignored
    expect(finals).not.toHaveBeenCalled();
    // Attaching to a closed session hangs the leg up at once.
    const late: PartyLeg = { party: 'customer', kind: 'sip', playFrame: vi.fn(), close: vi.fn() };
    session.attachLeg(late);
    expect(late.close).toHaveBeenCalledWith('explicit_end');
  });

  it('a throwing listener does not break the others', async () => {
    const { engines } = fakeEngines(['hi']);
    const { session } = makeSession(engines);
    const good = vi.fn();
    session.on('final', () => {
      throw new Error('bad listener');
    });
    session.on('final', good);
    speak(session, 'agent');
    await vi.waitFor(() => expect(good).toHaveBeenCalledTimes(1));
    session.close('test');
  });

  it('bridges every loud frame of a socket customer to the agent leg through the start-up backlog (assistive)', () => {
    const { engines } = fakeEngines([]);
    const { session, clock } = makeSession(engines, { mode: 'assistive_translation' });
    const played: Int16Array[] = [];
    session.attachLeg({ party: 'agent', kind: 'sip', playFrame: (f) => played.push(f), close: vi.fn() });
    const tone = () => Int16Array.from({ length: 160 }, (_, i) => Math.round(12000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
    const peak = (f: Int16Array) => f.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    let n = 0;
    let loudSent = 0;
    const send = (frames: number) => {
      for (let i = 0; i < frames; i++, n++) {
        const loud = n % 25 === 0;
        if (loud) loudSent++;
        session.pushAudio('customer', loud ? tone() : new Int16Array(160).fill(8));
      }
    };
    send(5); // the socket's first messages arrive together (a stall at start-up)
    for (let t = 0; t < 300; t++) {
      send(1);
      clock.tick();
    }
    clock.tick(session.queuedOutput('agent'));
    expect(played.filter((f) => peak(f) > 6000)).toHaveLength(loudSent);
    expect(played.length).toBeLessThan(n); // the backlog did go (in quiet frames)
    session.close('test');
  });
});
