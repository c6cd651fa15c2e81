// A channel id named as `audio.input.speaker` labels its party in the socket's transcript messages
// (SPEC "transcript.final": speaker is agent, customer or a channel id).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStreamGateway, type StreamTestGateway } from '../helpers/stream.js';
import { fakeEngines } from '../helpers/fake-engines.js';
import { concatPcm, silence, synthesizeSpeech } from '../helpers/speech-audio.js';

let t: StreamTestGateway;
const fakes = fakeEngines(['good morning']);

beforeAll(async () => {
  t = await startStreamGateway({ engines: fakes.engines });
});
afterAll(async () => {
  await t?.stop();
});

// Real speech, so either VAD (energy or Silero) cuts an utterance; the scripted recognizer answers it with its line.
const burst = async () => concatPcm(silence(300), await synthesizeSpeech('good morning'), silence(1000));

describe('channel id speakers', () => {
  it('labels the transcript with the channel id the client sent', async () => {
    const { id, token } = await t.createSession({ mode: 'bidirectional_translation', source_language: 'en', target_language: 'es' });
    const s = await t.connect(id, token);
    await s.waitForType('session.ready');
    // The first channel id is the customer, the second the agent (Party A, 'en', the one the fakes hear).
    await s.sendAudio(silence(20), { speaker: 'pstn-1', pace: 0 });
    await s.sendAudio(await burst(), { speaker: 'pstn-3', pace: 0 });
    const final = await s.waitForType('transcript.final', 20_000);
    expect(final).toMatchObject({ speaker: 'pstn-3', text: 'good morning' });
    await s.close();
  });
});
