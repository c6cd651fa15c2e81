// Embedded fallback for remote engines: when a remote engine fails (circuit open,
// deadline, error after its retries), the stage is served by the embedded engine if that serves the
// language, and the caller is told (the session reports `engine_error` saying it fell back).
// STT: a stream keeps the audio of every utterance the remote engine has not answered yet, so the
// utterance in flight is replayed into the embedded engine; the stream then stays on the embedded
// engine (a failing endpoint is not retried mid-session). Translation and synthesis fall back per
// call; a streamed synthesis falls back only before its first chunk (audio already played stays).
import { EventEmitter } from 'node:events';
import type { EmbeddedEngines } from './embedded.js';
import type { FallbackNotice, SttEngine, SttError, SttStream, SttStreamEvents, Translator, TtsEngine, VoiceSettings } from './types.js';

/** Audio kept per unanswered utterance (a runaway utterance is not kept whole: 60 s). */
const MAX_KEPT_FRAMES = 3000;

function reason(err: unknown): string {
  const code = (err as { code?: string }).code;
  return `${code ? `${code}: ` : ''}${(err as Error).message}`;
}

export class FallbackStt implements SttEngine {
  readonly name: string;
  readonly detectsLanguage?: boolean;

  constructor(
    readonly primary: SttEngine,
    private readonly embedded: EmbeddedEngines,
  ) {
    this.name = primary.name;
    this.detectsLanguage = primary.detectsLanguage;
  }

  languages(): string[] {
    return this.primary.languages();
  }

  openStream(opts: { language: string; detect?: boolean }): SttStream {
    return new FallbackSttStream(this.primary, opts, () => this.embedded.stt());
  }

  close(): Promise<void> {
    return this.primary.close();
  }
}

interface KeptUtterance {
  frames: Int16Array[];
  ended: boolean;
  /** Its audio went to the remote stream (false while the fallback is starting). */
  sent: boolean;
}

class FallbackSttStream extends EventEmitter<SttStreamEvents> implements SttStream {
  readonly language: string;
  private state: 'primary' | 'starting' | 'fallback' | 'closed' = 'primary';
  private primary: SttStream;
  private fallback: SttStream | null = null;
  private readonly kept: KeptUtterance[] = [];

  constructor(
    private readonly engine: SttEngine,
    private readonly opts: { language: string; detect?: boolean },
    private readonly startFallback: () => Promise<SttEngine>,
  ) {
    super();
    this.language = opts.language;
    this.primary = this.openPrimary();
  }

  private openPrimary(): SttStream {
    const s = this.engine.openStream(this.opts);
    s.on('partial', (p) => this.state === 'primary' && this.emit('partial', p));
    s.on('final', (f) => {
      if (this.state !== 'primary') return;
      this.kept.shift();
      this.emit('final', f);
    });
    s.on('error', (e) => this.onPrimaryError(e));
    return s;
  }

  write(frame: Int16Array): void {
    if (this.state === 'closed') return;
    if (this.state === 'fallback') return this.fallback!.write(frame);
    let u = this.kept.at(-1);
    if (!u || u.ended) this.kept.push((u = { frames: [], ended: false, sent: this.state === 'primary' }));
    if (u.frames.length < MAX_KEPT_FRAMES) u.frames.push(Int16Array.from(frame));
    if (this.state === 'primary') this.primary.write(frame);
  }

  endUtterance(): void {
    if (this.state === 'closed') return;
    if (this.state === 'fallback') return this.fallback!.endUtterance();
    const u = this.kept.at(-1);
    if (!u || u.ended) return;
    u.ended = true;
    if (this.state === 'primary') this.primary.endUtterance();
  }

  private onPrimaryError(e: SttError): void {
    if (this.state !== 'primary') return;
    this.state = 'starting';
    this.startFallback().then(
      (engine) => this.switchTo(engine, e),
      (err: unknown) => this.stayOnPrimary(e, `the embedded engine did not start (${reason(err)})`),
    );
  }

  private switchTo(engine: SttEngine, e: SttError): void {
    if (this.state !== 'starting') return;
    if (!engine.languages().includes(this.language)) return this.stayOnPrimary(e, null);
    let fb: SttStream;
    try {
      fb = engine.openStream({ language: this.language });
    } catch (err) {
      return this.stayOnPrimary(e, reason(err));
    }
    this.primary.close();
    this.state = 'fallback';
    this.fallback = fb;
    fb.on('partial', (p) => this.emit('partial', p));
    fb.on('final', (f) => this.emit('final', f));
    fb.on('error', (err) => this.emit('error', err));
    this.emit('fallback', { message: `speech-to-text by ${this.engine.name} failed (${e.code}: ${e.message}); fell back to ${engine.name}` });
    // The failed utterance and every later one the remote engine had not answered, in order.
    for (const u of this.kept.splice(0)) {
      for (const f of u.frames) fb.write(f);
      if (u.ended) fb.endUtterance();
    }
  }

  /** No fallback: the failed utterance ends in the error; audio kept meanwhile goes to the remote engine. */
  private stayOnPrimary(e: SttError, why: string | null): void {
    if (this.state !== 'starting') return;
    this.state = 'primary';
    this.kept.shift();
    this.emit('error', why ? { ...e, message: `${e.message} (no fallback: ${why})` } : e);
    for (const u of this.kept) {
      if (u.sent) continue;
      u.sent = true;
      for (const f of u.frames) this.primary.write(f);
      if (u.ended) this.primary.endUtterance();
    }
  }

  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.kept.length = 0;
    this.primary.close();
    this.fallback?.close();
  }
}

export class FallbackTranslator implements Translator {
  readonly name: string;

  constructor(
    readonly primary: Translator,
    private readonly embedded: EmbeddedEngines,
  ) {
    this.name = primary.name;
  }

  pairs(): Array<{ from: string; to: string }> {
    return this.primary.pairs();
  }

  supports(from: string, to: string): boolean {
    return this.primary.supports(from, to);
  }

  async translate(text: string, from: string, to: string, onFallback?: FallbackNotice): Promise<string> {
    try {
      return await this.primary.translate(text, from, to);
    } catch (err) {
      if ((err as { code?: string }).code === 'translate_unsupported') throw err;
      const fb = await this.embedded.translator().catch(() => null);
      if (!fb?.supports(from, to)) throw err;
      onFallback?.({ message: `translation by ${this.name} failed (${reason(err)}); fell back to ${fb.name}` });
      return fb.translate(text, from, to);
    }
  }

  close(): Promise<void> {
    return this.primary.close();
  }
}

export class FallbackTts implements TtsEngine {
  readonly name: string;
  readonly synthesizeStream?: TtsEngine['synthesizeStream'];

  constructor(
    readonly primary: TtsEngine,
    private readonly embedded: EmbeddedEngines,
  ) {
    this.name = primary.name;
    if (primary.synthesizeStream) this.synthesizeStream = (text, language, voice, onFallback) => this.stream(text, language, voice, onFallback);
  }

  languages(): string[] {
    return this.primary.languages();
  }

  private async fallbackFor(err: unknown, language: string): Promise<TtsEngine> {
    if ((err as { code?: string }).code === 'tts_unsupported') throw err;
    const fb = await this.embedded.tts().catch(() => null);
    if (!fb?.languages().includes(language)) throw err;
    return fb;
  }

  async synthesize(text: string, language: string, voice: VoiceSettings, onFallback?: FallbackNotice): Promise<Int16Array> {
    try {
      return await this.primary.synthesize(text, language, voice);
    } catch (err) {
      const fb = await this.fallbackFor(err, language);
      onFallback?.({ message: `speech synthesis by ${this.name} failed (${reason(err)}); fell back to ${fb.name}` });
      return fb.synthesize(text, language, voice);
    }
  }

  private async *stream(text: string, language: string, voice: VoiceSettings, onFallback?: FallbackNotice): AsyncGenerator<Int16Array> {
    let started = false;
    try {
      for await (const chunk of this.primary.synthesizeStream!(text, language, voice)) {
        started = true;
        yield chunk;
      }
    } catch (err) {
      if (started) throw err;
      const fb = await this.fallbackFor(err, language);
      onFallback?.({ message: `speech synthesis by ${this.name} failed (${reason(err)}); fell back to ${fb.name}` });
      yield await fb.synthesize(text, language, voice);
    }
  }

  close(): Promise<void> {
    return this.primary.close();
  }
}
