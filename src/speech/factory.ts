// Engines from configuration: createEngines() for the node (engines.*), and the per-stage builders
// the per-organization directory (directory.ts) reuses with an organization's choice merged in.
// Embedded stages come from the shared EmbeddedEngines when one is given (never started twice);
// remote stages are wrapped with the embedded fallback when `engines.fallback` is `embedded`.
import type { Config } from '../config/index.js';
import { LibreTranslateTranslator } from './translate/libretranslate.js';
import { VoskStt } from './stt/vosk/vosk-engine.js';
import { OpenAiStt } from './stt/openai/openai-stt.js';
import { DeepgramStt } from './stt/deepgram/deepgram-stt.js';
import { OpenAiTts } from './tts/openai-tts.js';
import { ElevenLabsTts } from './tts/elevenlabs-tts.js';
import { DEFAULT_POLICY } from './http/engine-endpoint.js';
import { EmbeddedEngines } from './embedded.js';
import { FallbackStt, FallbackTranslator, FallbackTts } from './fallback.js';
import type { EngineCatalog, Engines, SttEngine, Translator, TtsEngine } from './types.js';

export interface CreateEnginesOptions {
  /** Reports listener exceptions caught inside engines (wire to the logger). */
  onListenerError?: (err: unknown) => void;
  /** Looks up a named secret (API keys named by `apiKeySecret`); null when unset. */
  resolveSecret?: (name: string) => Promise<string | null>;
  /**
   * The node's shared embedded engines: embedded stages are taken from it (and not closed with these
   * engines), and it serves the fallback. Without it, embedded stages are started and owned here.
   */
  embedded?: EmbeddedEngines;
}

type Closable = { close(): Promise<void> };

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

/** A remote STT engine, or null for the embedded provider and 'none'. */
export function createRemoteStt(cfg: Config['engines'], opts: CreateEnginesOptions): SttEngine | null {
  const stt = cfg.stt;
  switch (stt.provider) {
    case 'none':
    case 'pocketsphinx':
      return null;
    case 'vosk':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the vosk provider');
      return new VoskStt({ url: stt.url, language: stt.defaultLanguage, timeoutMs: stt.timeoutMs, onListenerError: opts.onListenerError });
    case 'openai':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the openai provider');
      return new OpenAiStt({
        url: stt.url,
        model: stt.model,
        apiKey: apiKeyOf(stt, opts, 'STT_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: stt.timeoutMs, retries: stt.retries },
        partialIntervalMs: stt.partialIntervalMs,
        languages: stt.languages,
        onListenerError: opts.onListenerError,
      });
    case 'deepgram':
      if (!stt.url) throw new Error('engines.stt.url (STT_URL) is required for the deepgram provider');
      return new DeepgramStt({
        url: stt.url,
        model: stt.model === 'whisper-1' ? undefined : stt.model,
        apiKey: apiKeyOf(stt, opts, 'STT_API_KEY_SECRET'),
        languages: stt.languages ?? [stt.defaultLanguage],
        timeoutMs: stt.timeoutMs,
        reconnects: stt.retries,
        onListenerError: opts.onListenerError,
      });
  }
}

export async function createRemoteTranslator(cfg: Config['engines']): Promise<Translator | null> {
  const t = cfg.translate;
  switch (t.provider) {
    case 'none':
    case 'apertium':
      return null;
    case 'libretranslate':
      if (!t.url) throw new Error('engines.translate.url (TRANSLATE_URL) is required for the libretranslate provider');
      return LibreTranslateTranslator.create({ url: t.url, timeoutMs: t.timeoutMs });
  }
}

export function createRemoteTts(cfg: Config['engines'], opts: CreateEnginesOptions): TtsEngine | null {
  const tts = cfg.tts;
  switch (tts.provider) {
    case 'none':
    case 'espeak-ng':
      return null;
    case 'openai':
      if (!tts.url) throw new Error('engines.tts.url (TTS_URL) is required for the openai provider');
      return new OpenAiTts({
        url: tts.url,
        model: tts.model,
        voice: tts.voice,
        apiKey: apiKeyOf(tts, opts, 'TTS_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: tts.timeoutMs, retries: tts.retries },
        languages: tts.languages,
      });
    case 'elevenlabs':
      return new ElevenLabsTts({
        url: tts.url ?? 'https://api.elevenlabs.io',
        model: tts.model,
        voice: tts.voice,
        apiKey: apiKeyOf(tts, opts, 'TTS_API_KEY_SECRET'),
        policy: { ...DEFAULT_POLICY, timeoutMs: tts.timeoutMs, retries: tts.retries },
        languages: tts.languages ?? [cfg.stt.defaultLanguage],
      });
  }
}

/**
 * Builds the engines `cfg` names. Remote engines are owned by the result (closed with it); embedded
 * ones too unless they come from `opts.embedded`. The pocketsphinx pool has loaded its model when this resolves.
 */
export async function createEngines(cfg: Config['engines'], opts: CreateEnginesOptions = {}): Promise<Engines> {
  const shared = opts.embedded;
  const embedded = shared ?? new EmbeddedEngines(cfg, { onListenerError: opts.onListenerError });
  const fallback = shared && cfg.fallback === 'embedded' ? shared : null;
  const owned: Closable[] = shared ? [] : [embedded];
  const [stt, translator, tts] = await Promise.allSettled([
    (async (): Promise<SttEngine | null> => {
      if (cfg.stt.provider === 'pocketsphinx') return embedded.stt();
      const remote = createRemoteStt(cfg, opts);
      if (remote) owned.push(remote);
      return remote && fallback ? new FallbackStt(remote, fallback) : remote;
    })(),
    (async (): Promise<Translator | null> => {
      if (cfg.translate.provider === 'apertium') return embedded.translator();
      const remote = await createRemoteTranslator(cfg);
      if (remote) owned.push(remote);
      return remote && fallback ? new FallbackTranslator(remote, fallback) : remote;
    })(),
    (async (): Promise<TtsEngine | null> => {
      if (cfg.tts.provider === 'espeak-ng') return embedded.tts();
      const remote = createRemoteTts(cfg, opts);
      if (remote) owned.push(remote);
      return remote && fallback ? new FallbackTts(remote, fallback) : remote;
    })(),
  ]);
  const failed = [stt, translator, tts].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(owned.map((e) => e.close()));
    throw failed.reason;
  }
  const value = <T>(r: PromiseSettledResult<T>): T => (r as PromiseFulfilledResult<T>).value;
  return buildEngines(value(stt), value(translator), value(tts), owned);
}

/** Wraps already-built engines (tests, custom deployments); close() closes `owned` (default: the three). */
export function buildEngines(stt: SttEngine | null, translator: Translator | null, tts: TtsEngine | null, owned?: Closable[]): Engines {
  let closing: Promise<void> | null = null;
  return {
    stt,
    translator,
    tts,
    capabilities(): EngineCatalog {
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
      closing ??= Promise.allSettled((owned ?? [stt, translator, tts]).map(async (e) => e?.close())).then(() => undefined);
      return closing;
    },
  };
}
