// Per-message cost of the input path with engines off, in one process (no sockets): parse the
// audio.input JSON, decode base64 and mu-law, frame, VAD. Prints µs per 100 ms message.
import { parseClientMessage } from '../../src/stream/index.js';
import { LiveSession, MediaClock } from '../../src/sessions/index.js';
import { buildEngines } from '../../src/speech/index.js';
import { Framer, mulawDecodeInto } from '../../src/media/index.js';
import { synthesizeSpeech, concatPcm, silence, toMulaw } from '../../test/helpers/speech-audio.js';
import { defined } from '../defined.js';

const speech = toMulaw(concatPcm(await synthesizeSpeech('i would like to check my account balance', { voice: 'espeak' }), silence(1500)));
const msgs: Buffer[] = [];
for (let off = 0; off + 800 <= speech.length; off += 800) {
  msgs.push(
    Buffer.from(
      JSON.stringify({
        type: 'audio.input',
        speaker: 'customer',
        audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload: Buffer.from(speech.subarray(off, off + 800)).toString('base64') },
      }),
    ),
  );
}
const sessions = Array.from(
  { length: 100 },
  (_, i) =>
    new LiveSession({
      id: `sess_${i}`,
      orgId: 'org',
      mode: 'bidirectional_translation',
      sourceLanguage: 'en',
      targetLanguage: 'es',
      voice: {},
      engines: buildEngines(null, null, null),
      defaultLanguage: 'en',
      clock: new MediaClock(),
      awaitsLeg: false,
      hooks: { firstAudio() {}, activity() {}, async storeTurn() {} },
    }),
);
const framers = sessions.map((s) => new Framer((f) => s.pushAudio('customer', f)));
const scratch = new Int16Array(800);
const run = (n: number) => {
  for (let i = 0; i < n; i++) {
    const k = i % sessions.length;
    const p = parseClientMessage(defined(msgs[i % msgs.length], 'message'), 262144);
    if (!p.ok || p.msg.type !== 'audio.input') throw new Error('bad');
    mulawDecodeInto(p.msg.payload, scratch);
    defined(framers[k], 'framer').push(scratch.subarray(0, p.msg.payload.length));
  }
};
run(20_000); // warm up
const n = 200_000;
const t0 = performance.now();
run(n);
const us = ((performance.now() - t0) * 1000) / n;
console.log(`input path: ${us.toFixed(1)} µs per 100 ms audio.input message → ${(1e6 / us / 10).toFixed(0)} real-time sockets per core (input only)`);
