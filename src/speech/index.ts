// Public door of speech/: engine interfaces, the embedded engines, and createEngines() which
// picks them from configuration (provider 'none' -> null, so the API can refuse what no engine serves).
import type { Config } from '../config/index.js';
import { ApertiumTranslator } from './translate/apertium.js';
import { LibreTranslateTranslator } from './translate/libretranslate.js';
import { EspeakTts } from './tts/espeak.js';
import { ensureDecoderBinary } from './stt/pocketsphinx/decoder-binary.js';
import { PocketsphinxEngine } from './stt/pocketsphinx/pocketsphinx-engine.js';
import { VoskStt } from './stt/vosk/vosk-engine.js';
import { OpenAiStt } from './stt/openai/openai-stt.js';
import { DeepgramStt } from './stt/deepgram/deepgram-stt.js';
import { OpenAiTts } from './tts/openai-tts.js';
import { ElevenLabsTts } from './tts/elevenlabs-tts.js';
import { DEFAULT_POLICY } from './http/engine-endpoint.js';
import type { EngineCapabilities, Engines, SttEngine, Translator, TtsEngine } from './types.js';

export * from './types.js';
export { toIso1, toIso3 } from './languages.js';
export { PocketsphinxEngine, type PocketsphinxOptions, type DecoderStats } from './stt/pocketsphinx/pocketsphinx-engine.js';
export { ensureDecoderBinary, DEFAULT_DECODER_BINARY } from './stt/pocketsphinx/decoder-binary.js';
export { VoskStt, type VoskOptions } from './stt/vosk/vosk-engine.js';
export { ApertiumTranslator, discoverApertiumModes, type ApertiumOptions } from './translate/apertium.js';
export { LibreTranslateTranslator, type LibreTranslateOptions } from './translate/libretranslate.js';
export { EspeakTts, BASE_WPM, type EspeakOptions } from './tts/espeak.js';
export { OpenAiStt, type OpenAiSttOptions } from './stt/openai/openai-stt.js';
export { DeepgramStt, type DeepgramOptions } from './stt/deepgram/deepgram-stt.js';
export { OpenAiTts, OPENAI_PCM_RATE, type OpenAiTtsOptions } from './tts/openai-tts.js';
export { ElevenLabsTts, type ElevenLabsOptions } from './tts/elevenlabs-tts.js';
export { EngineEndpoint, EngineHttpError, DEFAULT_POLICY, type EndpointPolicy } from './http/engine-endpoint.js';
export { WHISPER_LANGUAGES, whisperLanguageToIso1 } from './whisper-languages.js';

export interface CreateEnginesOptions {
  /** Reports listener exceptions caught inside engines (wire to the logger). */
  onListenerError?: (err: unknown) => void;
  /** Looks up a node-wide named secret (API keys named by `apiKeySecret`); null when unset. */
  resolveSecret?: (name: string) => Promise<string | null>;
}

/** The API key of a remote engine: named secret first (read per request, so rotation needs no restart), else the clear setting. */
function apiKeyOf(c: { apiKey?: string; apiKeySecret?: string }, opts: CreateEnginesOptions, setting: string): () => Promise<string | null> {
  const { apiKeySecret: name, apiKey } = c;
  if (name) {
    if (!opts.resolveSecret) throw new Error(`${setting} names secret "${name}" but no secret store is available`);
    const resolve = opts.resolveSecret;
    return async () => (await resolve(name)) ?? apiKey ?? null;
  }
  return async () => apiKey ?? null;
}

async function createStt(cfg: Config['engines'], opts: CreateEnginesOptions): Promise<SttEngine | null> {
  const stt = cfg.stt;
  switch (stt.provider) {
    case 'none':
      return null;
    case 'pocketsphinx': {
      const engine = new PocketsphinxEngine({
        binary: await ensureDecoderBinary(),
        ...cfg.pocketsphinx,
        poolSize: stt.poolSize,
        timeoutMs: stt.timeoutMs,
        onListenerError: opts.onListenerError,
      });
      await engine.start();
      return engine;
    }
    case 'vosk':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the vosk provider');
      return new VoskStt({ url: stt.url, language: stt.defaultLanguage, timeoutMs: stt.timeoutMs, onListenerError: opts.onListenerError });
    case 'openai':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the openai provider');
      return new OpenAiStt({
        url: stt.url, model: stt.model, apiKey: apiKeyOf(stt, opts, 'STT_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: stt.timeoutMs, retries: stt.retries },
        partialIntervalMs: stt.partialIntervalMs, languages: stt.languages, onListenerError: opts.onListenerError,
      });
    case 'deepgram':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the deepgram provider');
      return new DeepgramStt({
        url: stt.url, model: stt.model === 'whisper-1' ? undefined : stt.model, apiKey: apiKeyOf(stt, opts, 'STT_API_KEY_SECRET'),
        languages: stt.languages ?? [stt.defaultLanguage], timeoutMs: stt.timeoutMs, reconnects: stt.retries, onListenerError: opts.onListenerError,
      });
  }
}

async function createTranslator(cfg: Config['engines']): Promise<Translator | null> {
  const t = cfg.translate;
  switch (t.provider) {
    case 'none':
      return null;
    case 'apertium':
      return ApertiumTranslator.create({ timeoutMs: t.timeoutMs });
    case 'libretranslate':
      if (!t.url) throw new Error('engines.translate.url (TRANSLATE_URL) is required for the libretranslate provider');
      return LibreTranslateTranslator.create({ url: t.url, timeoutMs: t.timeoutMs });
  }
}

async function createTts(cfg: Config['engines'], opts: CreateEnginesOptions): Promise<TtsEngine | null> {
  const tts = cfg.tts;
  switch (tts.provider) {
    case 'none':
      return null;
    case 'espeak-ng':
      return EspeakTts.create({ timeoutMs: tts.timeoutMs });
    case 'openai':
      if (!tts.url) throw new Error('engines.tts.url (TTS_URL) is required for the openai provider');
      return new OpenAiTts({
        url: tts.url, model: tts.model, voice: tts.voice, apiKey: apiKeyOf(tts, opts, 'TTS_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: tts.timeoutMs, retries: tts.retries }, languages: tts.languages,
      });
    case 'elevenlabs':
      return new ElevenLabsTts({
        url: tts.url ?? 'https://api.elevenlabs.io', model: tts.model, voice: tts.voice, apiKey: apiKeyOf(tts, opts, 'TTS_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: tts.timeoutMs, retries: tts.retries }, languages: tts.languages ?? [cfg.stt.defaultLanguage],
      });
  }
}

/** Starts the configured engines (the pocketsphinx pool has loaded its model when this resolves). */
export async function createEngines(cfg: Config['engines'], opts: CreateEnginesOptions = {}): Promise<Engines> {
  const [stt, translator, tts] = await Promise.allSettled([createStt(cfg, opts), createTranslator(cfg), createTts(cfg, opts)]);
  const started = [stt, translator, tts].flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const failed = [stt, translator, tts].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(started.map((e) => e.close()));
    throw failed.reason;
  }
  const value = <T>(r: PromiseSettledResult<T>): T => (r as PromiseFulfilledResult<T>).value;
  return buildEngines(value(stt), value(translator), value(tts));
}

/** Wraps already-built engines (tests, custom deployments). */
export function buildEngines(stt: SttEngine | null, translator: Translator | null, tts: TtsEngine | null): Engines {
  let closing: Promise<void> | null = null;
  return {
    stt,
    translator,
    tts,
    capabilities(): EngineCapabilities {
      return {
        stt: { provider: stt?.name ?? 'none', languages: stt?.languages() ?? [] },
        translate: { provider: translator?.name ?? 'none', pairs: translator?.pairs() ?? [] },
        tts: { provider: tts?.name ?? 'none', languages: tts?.languages() ?? [] },
      };
    },
    canTranscribe: (language) => stt?.languages().includes(language) ?? false,
    canTranslate: (from, to) => from === to || (translator?.supports(from, to) ?? false),
    canSpeak: (language) => tts?.languages().includes(language) ?? false,
    detectsLanguage: () => stt?.detectsLanguage ?? false,
    close(): Promise<void> {
      closing ??= Promise.allSettled([stt?.close(), translator?.close(), tts?.close()]).then(() => undefined);
      return closing;
    },
  };
}
