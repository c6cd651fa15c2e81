// Adapter for OpenAI-compatible speech synthesis (OpenAI, Kokoro-FastAPI, openedai-speech, LocalAI …):
// `POST {base}/audio/speech` with JSON {model, voice, input, response_format, speed}. We ask for
// `pcm`: raw 24 kHz 16-bit little-endian mono in OpenAI's API, no header, so every chunk of the
// chunked response can be resampled to 8 kHz and played while the rest is still being synthesized.
// (`wav` would work too but its header sizes are placeholders while streaming; pcm is simpler.)
import { Resampler, SAMPLE_RATE } from '../../media/index.js';
import { EngineEndpoint, EngineHttpError, type EndpointPolicy } from '../http/engine-endpoint.js';
import { SpeechEngineError, type TtsEngine, type VoiceSettings } from '../types.js';
import { WHISPER_LANGUAGES } from '../whisper-languages.js';
import { collectPcm } from './collect-stream.js';

/** Sample rate of `response_format: "pcm"` in OpenAI's API. */
export const OPENAI_PCM_RATE = 24_000;

export interface OpenAiTtsOptions {
  url: string;
  model: string;
  /** Voice when the session's `voice.voice_id` names none (e.g. "alloy"). */
  voice: string;
  apiKey: () => Promise<string | null>;
  policy: EndpointPolicy;
  languages?: string[];
  /** Sample rate the server's pcm uses (24000 for OpenAI; some self-hosted servers differ). */
  pcmRate?: number;
}

export class OpenAiTts implements TtsEngine {
  readonly name = 'openai';
  readonly endpoint: EngineEndpoint;

  constructor(private readonly opts: OpenAiTtsOptions) {
    this.endpoint = new EngineEndpoint(`speech server ${new URL(opts.url).host}`, opts.policy);
  }

  languages(): string[] {
    return this.opts.languages ?? WHISPER_LANGUAGES;
  }

  synthesize(text: string, language: string, voice: VoiceSettings): Promise<Int16Array> {
    return collectPcm(this.synthesizeStream(text, language, voice));
  }

  async *synthesizeStream(text: string, language: string, voice: VoiceSettings): AsyncIterable<Int16Array> {
    if (!this.languages().includes(language)) throw new SpeechEngineError('tts_unsupported', `the speech server is not configured for "${language}"`);
    if (text.trim() === '') return;
    const key = await this.opts.apiKey();
    // OpenAI accepts speed 0.25–4.0; stability/similarity_boost have no equivalent here.
    const speed = voice.speed && voice.speed > 0 ? Math.min(4, Math.max(0.25, voice.speed)) : 1;
    let res: Response;
    try {
      res = await this.endpoint.fetch(`${this.opts.url.replace(/\/$/, '')}/audio/speech`, () => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ model: this.opts.model, voice: voice.voice_id || this.opts.voice, input: text, response_format: 'pcm', speed }),
      }));
    } catch (err) {
      throw toTtsError(err);
    }
    if (!res.body) return;
    const resampler = new Resampler(this.opts.pcmRate ?? OPENAI_PCM_RATE, SAMPLE_RATE);
    let carry: Buffer | null = null; // an odd byte split across chunks
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (carry) bytes = Buffer.concat([carry, bytes]);
        const even = bytes.length & ~1;
        carry = even < bytes.length ? Buffer.from(bytes.subarray(even)) : null;
        if (even === 0) continue;
        const samples = new Int16Array(even / 2);
        for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
        const out = resampler.push(samples);
        if (out.length) yield out;
      }
    } catch (err) {
      this.endpoint.recordFailure();
      throw toTtsError(err);
    }
    const tail = resampler.flush();
    if (tail.length) yield tail;
  }

  async close(): Promise<void> {}
}

function toTtsError(err: unknown): SpeechEngineError {
  if (err instanceof SpeechEngineError) return err;
  const e = err as Error;
  const timeout = (err instanceof EngineHttpError && err.kind === 'timeout') || e.name === 'TimeoutError';
  return new SpeechEngineError(timeout ? 'tts_timeout' : 'tts_failed', timeout ? e.message : `speech server: ${e.message}`);
}
