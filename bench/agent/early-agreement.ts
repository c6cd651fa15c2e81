// How often the recognizer's settled hypothesis (what an agent answers early) differs from its final,
// and how much earlier it comes. Prints figures; asserts nothing.
//
// Each phrase (flite speech, 300 ms of silence around it, as the agent modes' VAD hangover leaves
// it) goes through the embedded pocketsphinx decoder as fast as the pipe takes it, the first
// utterance of a fresh stream. For each: settled or not (isSettled), whether the hypothesis equals
// the final, and the time from the hypothesis to the final (the end-of-utterance search).
//
//   npx tsx bench/agent/early-agreement.ts
import { loadConfig } from '../../src/config/index.js';
import { toFrames } from '../../src/media/index.js';
import { PocketsphinxEngine, ensureDecoderBinary, type SttPartial } from '../../src/speech/index.js';
import { isSettled } from '../../src/sessions/index.js';
import { synthesizeSpeech } from '../../test/helpers/speech-audio.js';
import { defined } from '../defined.js';

const PHRASES = [
  'what are your opening hours',
  'i need help with my order',
  'i would like to check my account balance',
  'thank you very much',
  'no thank you',
  'good morning',
  'where is my order',
  'i want to speak to a person',
  'can you tell me the price',
  'my order number is one two three four',
  'i would like a refund please',
  'when do you close on saturday',
];

const cfg = loadConfig().engines;
const engine = new PocketsphinxEngine({ binary: await ensureDecoderBinary(), ...cfg.pocketsphinx, poolSize: 1, timeoutMs: 60_000 });
await engine.start();
const norm = (t: string) =>
  t
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
let settled = 0;
let agree = 0;
let settledAgree = 0;
const leads: number[] = [];
for (const phrase of PHRASES) {
  const pcm = await synthesizeSpeech(phrase, { voice: 'flite', padMs: 300 });
  const frames = toFrames(pcm);
  const stream = engine.openStream({ language: 'en' });
  let hyp: (SttPartial & { at: number }) | null = null;
  const final = new Promise<{ text: string; at: number }>((resolve) => stream.once('final', (f) => resolve({ text: f.text, at: performance.now() })));
  stream.on('partial', (p) => {
    if (p.complete) hyp = { ...p, at: performance.now() };
  });
  for (const f of frames) stream.write(f);
  stream.endUtterance();
  const f = await final;
  stream.close();
  const h = hyp as (SttPartial & { at: number }) | null;
  const isSet = !!h && isSettled({ text: h.text, utteranceMs: frames.length * 20, decodedMs: h.decodedMs ?? 0, stableMs: h.stableMs ?? 0 });
  const same = !!h && norm(h.text) === norm(f.text);
  if (isSet) settled++;
  if (same) agree++;
  if (isSet && same) settledAgree++;
  if (h) leads.push(f.at - h.at);
  console.log(
    `${isSet ? 'settled  ' : 'unsettled'} ${same ? 'same     ' : 'DIFFERENT'} stable ${String(h?.stableMs ?? '-').padStart(4)} ms, final ${(f.at - (h?.at ?? f.at)).toFixed(0).padStart(5)} ms later | "${phrase}" → hyp "${h?.text}" / final "${f.text}"`,
  );
}
leads.sort((a, b) => a - b);
console.log(
  `${PHRASES.length} phrases: settled ${settled}; hypothesis = final ${agree}; settled and = final ${settledAgree} of ${settled}; ` +
    `final after the hypothesis p50 ${defined(leads[Math.floor(leads.length / 2)], 'p50 lead').toFixed(0)} ms, max ${defined(leads[leads.length - 1], 'max lead').toFixed(0)} ms`,
);
await engine.close();
process.exit(0);
