// The embedded engines (pocketsphinx, apertium, espeak-ng), started once per node on first use and
// shared: by the node's own engines when configured, by organizations that choose them, and as the
// fallback when a remote engine fails (fallback.ts). Starting pocketsphinx loads its model, so
// nothing is started until someone needs it.
import type { Config } from '../config/index.js';
import { ensureDecoderBinary } from './stt/pocketsphinx/decoder-binary.js';
import { PocketsphinxEngine } from './stt/pocketsphinx/pocketsphinx-engine.js';
import { ApertiumTranslator } from './translate/apertium.js';
import { EspeakTts } from './tts/espeak.js';
import type { SttEngine, Translator, TtsEngine } from './types.js';

export const EMBEDDED_PROVIDERS = { stt: 'pocketsphinx', translate: 'apertium', tts: 'espeak-ng' } as const;

export class EmbeddedEngines {
  private sttP: Promise<SttEngine> | null = null;
  private translatorP: Promise<Translator> | null = null;
  private ttsP: Promise<TtsEngine> | null = null;
  private closed = false;

  constructor(
    private readonly cfg: Config['engines'],
    private readonly opts: { onListenerError?: (err: unknown) => void } = {},
  ) {}

  stt(): Promise<SttEngine> {
    return (this.sttP ??= this.start(
      async () => {
        const engine = new PocketsphinxEngine({
          binary: await ensureDecoderBinary(),
          ...this.cfg.pocketsphinx,
          poolSize: this.cfg.stt.poolSize,
          timeoutMs: this.cfg.stt.timeoutMs,
          onListenerError: this.opts.onListenerError,
        });
        await engine.start();
        return engine;
      },
      () => (this.sttP = null),
    ));
  }

  translator(): Promise<Translator> {
    return (this.translatorP ??= this.start(
      () => ApertiumTranslator.create({ timeoutMs: this.cfg.translate.timeoutMs }),
      () => (this.translatorP = null),
    ));
  }

  tts(): Promise<TtsEngine> {
    return (this.ttsP ??= this.start(
      () => EspeakTts.create({ timeoutMs: this.cfg.tts.timeoutMs }),
      () => (this.ttsP = null),
    ));
  }

  /** A failed start is forgotten, so the next use tries again. */
  private start<T extends { close(): Promise<void> }>(make: () => Promise<T>, forget: () => void): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the embedded engines are closed'));
    const p = make();
    p.catch(forget);
    return p;
  }

  async close(): Promise<void> {
    this.closed = true;
    const started = [this.sttP, this.translatorP, this.ttsP].filter((p) => p !== null);
    await Promise.allSettled(started.map(async (p) => (await p).close()));
  }
}
