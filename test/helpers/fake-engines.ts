// Scriptable speech engines for stage and session tests: the STT stream answers each utterance with
// the next scripted text (or error), the translator and TTS can be made slow or failing.
import { EventEmitter } from 'node:events';
import {
  buildEngines,
  SpeechEngineError,
  type Engines,
  type SttEngine,
  type SttStream,
  type SttStreamEvents,
  type Translator,
  type TtsEngine,
} from '../../src/speech/index.js';

export class FakeSttStream extends EventEmitter<SttStreamEvents> implements SttStream {
  written = 0;
  utteranceFrames = 0;
  closed = false;
  constructor(
    readonly language: string,
    private readonly script: Array<string | Error>,
  ) {
    super();
  }
  write(): void {
    this.written++;
    this.utteranceFrames++;
    if (this.utteranceFrames === 5) this.emit('partial', { text: 'partial words' });
  }
  endUtterance(): void {
    this.utteranceFrames = 0;
    const next = this.script.shift() ?? '';
    queueMicrotask(() => {
      if (this.closed) return;
      if (next instanceof Error) this.emit('error', { code: 'stt_timeout', message: next.message });
      else this.emit('final', { text: next, confidence: 0.9 });
    });
  }
  close(): void {
    this.closed = true;
  }
}

export class FakeStt implements SttEngine {
  readonly name = 'fake-stt';
  readonly streams: FakeSttStream[] = [];
  constructor(
    private readonly script: Array<string | Error> = [],
    private readonly langs = ['en'],
  ) {}
  languages(): string[] {
    return this.langs;
  }
  openStream(opts: { language: string }): SttStream {
    const s = new FakeSttStream(opts.language, this.script);
    this.streams.push(s);
    return s;
  }
  async close(): Promise<void> {}
}

export class FakeTranslator implements Translator {
  readonly name = 'fake-translate';
  fail = false;
  /** Per-text delay (ms), to test ordering. */
  delays = new Map<string, number>();
  pairs() {
    return [
      { from: 'en', to: 'es' },
      { from: 'es', to: 'en' },
    ];
  }
  supports(from: string, to: string): boolean {
    return this.pairs().some((p) => p.from === from && p.to === to);
  }
  async translate(text: string, _from: string, to: string): Promise<string> {
    const d = this.delays.get(text);
    if (d) await new Promise((r) => setTimeout(r, d));
    if (this.fail) throw new SpeechEngineError('translate_failed', 'apertium exited with status 1');
    return `[${to}] ${text}`;
  }
  async close(): Promise<void> {}
}

export class FakeTts implements TtsEngine {
  readonly name = 'fake-tts';
  fail = false;
  languages(): string[] {
    return ['en', 'es'];
  }
  /** 100 ms of a constant level per word. */
  async synthesize(text: string): Promise<Int16Array> {
    if (this.fail) throw new SpeechEngineError('tts_failed', 'espeak-ng crashed');
    return new Int16Array(800 * text.split(/\s+/).length).fill(1000);
  }
  async close(): Promise<void> {}
}

export function fakeEngines(script: Array<string | Error> = []): { engines: Engines; stt: FakeStt; translator: FakeTranslator; tts: FakeTts } {
  const stt = new FakeStt(script);
  const translator = new FakeTranslator();
  const tts = new FakeTts();
  return { engines: buildEngines(stt, translator, tts), stt, translator, tts };
}

/** A loud frame (speech to the VAD) and a silent one. */
export const loudFrame = (): Int16Array => {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(8000 * Math.sin(i / 3));
  return f;
};
export const quietFrame = (): Int16Array => new Int16Array(160);
