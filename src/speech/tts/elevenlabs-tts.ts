// Adapter for ElevenLabs' streaming speech API (elevenlabs.io/docs/api-reference/text-to-speech/stream),
// the API the SPEC voice fields come from:
//   POST {base}/v1/text-to-speech/{voice_id}/stream?output_format=ulaw_8000
//   header `xi-api-key`; JSON {text, model_id, language_code?, voice_settings: {stability, similarity_boost, speed}}
//   answer: raw mu-law 8 kHz (telephony's own format: no resampling), chunked as it is synthesized.
// Errors are JSON {"detail": {"status", "message"}} (handled by EngineEndpoint).
import { mulawDecode } from '../../media/index.js';
import { EngineEndpoint, EngineHttpError, type EndpointPolicy } from '../http/engine-endpoint.js';
import { SpeechEngineError, type TtsEngine, type VoiceSettings } from '../types.js';
import { collectPcm } from './collect-stream.js';

export interface ElevenLabsOptions {
  /** e.g. https://api.elevenlabs.io (the adapter adds /v1/…). */
  url: string;
  /** model_id, e.g. eleven_flash_v2_5 (multilingual) or eleven_multilingual_v2. */
  model: string;
  /** voice_id when the session's voice names none. */
  voice: string;
  apiKey: () => Promise<string | null>;
  policy: EndpointPolicy;
  languages: string[];
}

export class ElevenLabsTts implements TtsEngine {
  readonly name = 'elevenlabs';
  readonly endpoint: EngineEndpoint;

  constructor(private readonly opts: ElevenLabsOptions) {
    this.endpoint = new EngineEndpoint(`speech server ${new URL(opts.url).host}`, opts.policy);
  }

  languages(): string[] {
    return this.opts.languages;
  }

  synthesize(text: string, language: string, voice: VoiceSettings): Promise<Int16Array> {
    return collectPcm(this.synthesizeStream(text, language, voice));
  }

  async *synthesizeStream(text: string, language: string, voice: VoiceSettings): AsyncIterable<Int16Array> {
    if (!this.opts.languages.includes(language)) throw new SpeechEngineError('tts_unsupported', `the ElevenLabs adapter is not configured for "${language}"`);
    if (text.trim() === '') return;
    const key = await this.opts.apiKey();
    const voiceId = encodeURIComponent(voice.voice_id || this.opts.voice);
    const settings: Record<string, number> = {};
    if (voice.stability !== undefined) settings.stability = voice.stability;
    if (voice.similarity_boost !== undefined) settings.similarity_boost = voice.similarity_boost;
    // ElevenLabs accepts speed 0.7–1.2.
    if (voice.speed !== undefined) settings.speed = Math.min(1.2, Math.max(0.7, voice.speed));
    let res: Response;
    try {
      res = await this.endpoint.fetch(`${this.opts.url.replace(/\/$/, '')}/v1/text-to-speech/${voiceId}/stream?output_format=ulaw_8000`, () => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'audio/basic', ...(key ? { 'xi-api-key': key } : {}) },
        body: JSON.stringify({ text, model_id: this.opts.model, language_code: language, voice_settings: settings }),
      }));
    } catch (err) {
      throw toTtsError(err);
    }
    if (!res.body) return;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (chunk.length) yield mulawDecode(chunk);
      }
    } catch (err) {
      this.endpoint.recordFailure();
      throw toTtsError(err);
    }
  }

  async close(): Promise<void> {}
}

function toTtsError(err: unknown): SpeechEngineError {
  if (err instanceof SpeechEngineError) return err;
  const e = err as Error;
  const timeout = (err instanceof EngineHttpError && err.kind === 'timeout') || e.name === 'TimeoutError';
  return new SpeechEngineError(timeout ? 'tts_timeout' : 'tts_failed', timeout ? e.message : `ElevenLabs: ${e.message}`);
}
