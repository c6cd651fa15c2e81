// End of utterance -> first translated audio, per remote adapter, each against its local protocol
// server (test/helpers/speech-*-server.ts) with the embedded engines behind it. The engine time
// (pocketsphinx decoding inside the server) is reported apart, so "adapter" is what voxbridge and
// the protocol add. Translation is Apertium (en->es) in both rows. Prints figures; asserts nothing.
// Run: nice -n 10 npx tsx bench/speech/adapters.ts
import { toFrames } from '../../src/media/index.js';
import {
  ApertiumTranslator,
  DEFAULT_POLICY,
  DeepgramStt,
  ElevenLabsTts,
  OpenAiStt,
  OpenAiTts,
  type SttEngine,
  type TtsEngine,
} from '../../src/speech/index.js';
import { startOpenAiAudioServer } from '../../test/helpers/speech-openai-server.js';
import { startDeepgramServer } from '../../test/helpers/speech-deepgram-server.js';
import { startElevenLabsServer } from '../../test/helpers/speech-elevenlabs-server.js';
import { synthesizeSpeech } from '../../test/helpers/speech-audio.js';

const RUNS = 5;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const openai = await startOpenAiAudioServer();
  const deepgram = await startDeepgramServer();
  const eleven = await startElevenLabsServer({ apiKey: 'k' });
  const policy = { ...DEFAULT_POLICY, timeoutMs: 30_000 };
  const translator = await ApertiumTranslator.create({ timeoutMs: 20_000 });
  const speech = await synthesizeSpeech('i would like to check my account balance', { padMs: 300 });
  const combos: Array<{ name: string; stt: SttEngine; tts: TtsEngine; engineMs: () => number | undefined }> = [
    {
      name: 'openai STT + openai TTS',
      stt: new OpenAiStt({ url: openai.url, model: 'whisper-1', apiKey: async () => null, policy, partialIntervalMs: 0 }),
      tts: new OpenAiTts({ url: openai.url, model: 'tts-1', voice: 'alloy', apiKey: async () => null, policy, languages: ['es'] }),
      engineMs: () => openai.transcriptions.at(-1)?.engineMs,
    },
    {
      name: 'deepgram STT + elevenlabs TTS',
      stt: new DeepgramStt({ url: deepgram.url, apiKey: async () => null, languages: ['en'], timeoutMs: 30_000 }),
      tts: new ElevenLabsTts({
        url: eleven.url,
        model: 'eleven_flash_v2_5',
        voice: '21m00Tcm4TlvDq8ikWAM',
        apiKey: async () => 'k',
        policy,
        languages: ['es'],
      }),
      engineMs: () => deepgram.requests.at(-1)?.engineMs,
    },
  ];
  console.log(`end of utterance -> first translated audio, median of ${RUNS} (shared 2-core machine, loopback servers)\n`);
  for (const c of combos) {
    const total: number[] = [];
    const engine: number[] = [];
    const sttMs: number[] = [];
    const firstAudio: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const stream = c.stt.openStream({ language: 'en' });
      const final = new Promise<string>((resolve, reject) => {
        stream.once('final', (f) => resolve(f.text));
        stream.once('error', (e) => reject(new Error(e.message)));
      });
      for (const f of toFrames(speech)) stream.write(f);
      if (c.name.startsWith('deepgram')) await new Promise((r) => setTimeout(r, 300)); // let the socket carry the audio first
      const t0 = performance.now();
      stream.endUtterance();
      const text = await final;
      const t1 = performance.now();
      const es = await translator.translate(text, 'en', 'es');
      let tFirst = 0;
      for await (const chunk of c.tts.synthesizeStream!(es, 'es', {})) {
        if (chunk.length && !tFirst) tFirst = performance.now();
      }
      stream.close();
      total.push(tFirst - t0);
      sttMs.push(t1 - t0);
      engine.push(c.engineMs() ?? 0);
      firstAudio.push(tFirst - t1);
    }
    console.log(
      `${c.name.padEnd(30)} total ${median(total).toFixed(0)} ms = STT final ${median(sttMs).toFixed(0)} ms (of which decoder ${median(engine).toFixed(0)} ms) + translate and TTS first audio ${median(firstAudio).toFixed(0)} ms`,
    );
  }
  await openai.close();
  await deepgram.close();
  await eleven.close();
  await translator.close();
}

void main();
