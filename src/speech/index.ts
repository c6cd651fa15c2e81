// Public door of speech/: engine interfaces, the embedded engines, and createEngines() which
// picks them from configuration (provider 'none' -> null, so the API can refuse what no engine serves).
import type { Config } from '../config/index.js';
import { ApertiumTranslator } from './translate/apertium.js';
import { LibreTranslateTranslator } from './translate/libretranslate.js';
import { EspeakTts } from './tts/espeak.js';
import { ensureDecoderBinary } from './stt/pocketsphinx/decoder-binary.js';
import { PocketsphinxEngine } from './stt/pocketsphinx/pocketsphinx-engine.js';
import { VoskStt } from './stt/vosk/vosk-engine.js';
import type { EngineCapabilities, Engines, SttEngine, Translator, TtsEngine } from './types.js';

export * from './types.js';
export { toIso1, toIso3 } from './languages.js';
export { PocketsphinxEngine, type PocketsphinxOptions, type DecoderStats } from './stt/pocketsphinx/pocketsphinx-engine.js';
export { ensureDecoderBinary, DEFAULT_DECODER_BINARY } from './stt/pocketsphinx/decoder-binary.js';
export { VoskStt, type VoskOptions } from './stt/vosk/vosk-engine.js';
export { ApertiumTranslator, discoverApertiumModes, type ApertiumOptions } from './translate/apertium.js';
export { LibreTranslateTranslator, type LibreTranslateOptions } from './translate/libretranslate.js';
export { EspeakTts, BASE_WPM, type EspeakOptions } from './tts/espeak.js';

export interface CreateEnginesOptions {
  /** Reports listener exceptions caught inside engines (wire to the logger). */
  onListenerError?: (err: unknown) => void;
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

async function createTts(cfg: Config['engines']): Promise<TtsEngine | null> {
  switch (cfg.tts.provider) {
    case 'none':
      return null;
    case 'espeak-ng':
      return EspeakTts.create({ timeoutMs: cfg.tts.timeoutMs });
  }
}

/** Starts the configured engines (the pocketsphinx pool has loaded its model when this resolves). */
export async function createEngines(cfg: Config['engines'], opts: CreateEnginesOptions = {}): Promise<Engines> {
  const [stt, translator, tts] = await Promise.allSettled([createStt(cfg, opts), createTranslator(cfg), createTts(cfg)]);
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
    close(): Promise<void> {
      closing ??= Promise.allSettled([stt?.close(), translator?.close(), tts?.close()]).then(() => undefined);
      return closing;
    },
  };
}
