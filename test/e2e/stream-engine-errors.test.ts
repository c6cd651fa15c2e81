// A failing engine reaches the socket as `session.error` (code engine_error) and the session keeps
// running (issue: "an engine that fails or times out produces a session.error … the session keeps running").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { fakeEngines } from '../helpers/fake-engines.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';

let t: StreamTestGateway;
const fakes = fakeEngines([new Error('decoder timed out'), 'good morning', 'thank you']);

beforeAll(async () => {
  t = await startStreamGateway({ engines: fakes.engines });
});
afterAll(async () => {
  await t?.stop();
});

// Real speech, so either VAD (energy or Silero) cuts an utterance; the scripted recognizer answers
// each one with its next line whatever was said.
const burst = async () => concatPcm(silence(300), await synthesizeSpeech('good morning'), silence(1000));

describe('engine failures', () => {
  it('reports recognizer, translator and synthesizer failures and keeps the session running', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');

    await s.sendAudio(await burst(), { speaker: 'agent', pace: 0 });
    const sttError = await s.waitFor((m) => m.type === 'session.error' && m.error.code === 'engine_error', 20_000, 'stt error');
    expect(sttError.error.message).toMatch(/speech-to-text failed for agent speech \(stt_timeout\)/);

    fakes.translator.fail = true;
    await s.sendAudio(await burst(), { speaker: 'agent', pace: 0 });
    const first = await s.waitForType('transcript.final', 20_000);
    expect(first).toMatchObject({ sequence: 1, text: 'good morning' });
    expect(first).not.toHaveProperty('translation');
    expect(s.of('session.error').some((m) => /translation en->es/.test(m.error.message))).toBe(true);

    fakes.translator.fail = false;
    fakes.tts.fail = true;
    await s.sendAudio(await burst(), { speaker: 'agent', pace: 0 });
    const second = await s.waitFor((m) => m.type === 'transcript.final' && m.sequence === 2, 20_000, 'second final');
    expect(second.translation).toEqual({ language: 'es', text: '[es] thank you' });
    await s.waitFor((m) => m.type === 'session.error' && /speech synthesis/.test(m.error.message), 20_000, 'tts error');
    expect(s.of('audio.output')).toHaveLength(0);

    s.send({ type: 'ping' });
    await s.waitForType('pong');
    expect(s.isClosed).toBe(false);
    await s.close();
  });
});
