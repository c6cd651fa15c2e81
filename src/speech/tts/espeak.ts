// Embedded TTS with espeak-ng: WAV on stdout (22050 Hz), resampled to the pipeline's 8 kHz.
// Text goes in on stdin, never through a shell or argv (so "-..." text is not read as an option).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseWav, resample, SAMPLE_RATE } from '../../media/index.js';
import { SpeechEngineError, type TtsEngine, type VoiceSettings } from '../types.js';
import { runProcess } from '../run-process.js';

const run = promisify(execFile);

export interface EspeakOptions {
  timeoutMs: number;
  binary?: string;
}

/** espeak-ng's default rate; `voice.speed` scales it. */
export const BASE_WPM = 175;

/** Preferred espeak voice per ISO 639-1 language when the caller names none. */
const DEFAULT_VOICE: Record<string, string> = { en: 'en-us', pt: 'pt-br', es: 'es', zh: 'cmn' };

// espeak voice names and variants: "es", "en-us", "es+f3", "gmw/en-GB-x-rp".
const VOICE_NAME = /^[A-Za-z0-9_\-/]+(\+[A-Za-z0-9_]+)?$/;

export class EspeakTts implements TtsEngine {
  readonly name = 'espeak-ng';

  private constructor(
    private readonly langs: Set<string>,
    private readonly opts: EspeakOptions,
  ) {}

  static async create(opts: EspeakOptions): Promise<EspeakTts> {
    const { stdout } = await run(opts.binary ?? 'espeak-ng', ['--voices'], { timeout: opts.timeoutMs });
    const langs = new Set<string>();
    for (const line of stdout.split('\n').slice(1)) {
      const lang = line.trim().split(/\s+/)[1]; // "5  en-us  --/M  ..."
      const m = lang && /^([a-z]{2})(?:-|$)/.exec(lang);
      if (m?.[1]) langs.add(m[1]);
    }
    return new EspeakTts(langs, opts);
  }

  languages(): string[] {
    return [...this.langs].sort();
  }

  async synthesize(text: string, language: string, voice: VoiceSettings): Promise<Int16Array> {
    if (!this.langs.has(language)) throw new SpeechEngineError('tts_unsupported', `espeak-ng has no voice for "${language}"`);
    if (text.trim() === '') return new Int16Array(0);
    // stability and similarity_boost describe neural voice cloning (ElevenLabs-style); a formant
    // synthesizer has no equivalent, so they are accepted and ignored here.
    const speed = voice.speed && voice.speed > 0 ? voice.speed : 1;
    const wpm = Math.round(Math.min(450, Math.max(80, BASE_WPM * speed)));
    const fallback = DEFAULT_VOICE[language] ?? language;
    // voice_id may name an espeak voice/variant (es+f3); anything else (a cloud voice id) falls back.
    const named = voice.voice_id && VOICE_NAME.test(voice.voice_id) ? voice.voice_id : null;
    let wav: Buffer;
    try {
      wav = await this.render(text, named ?? fallback, wpm);
    } catch (err) {
      if (!named || (err instanceof SpeechEngineError && err.code === 'tts_timeout')) throw err;
      wav = await this.render(text, fallback, wpm);
    }
    const parsed = parseWav(wav);
    return resample(parsed.samples, parsed.sampleRate, SAMPLE_RATE);
  }

  async close(): Promise<void> {}

  private render(text: string, voiceName: string, wpm: number): Promise<Buffer> {
    return runProcess({
      binary: this.opts.binary ?? 'espeak-ng',
      args: ['-v', voiceName, '-s', String(wpm), '--stdout', '--stdin'],
      input: text,
      timeoutMs: this.opts.timeoutMs,
      failedCode: 'tts_failed',
      timeoutCode: 'tts_timeout',
      label: 'espeak-ng',
    });
  }
}
