// Adapter for OpenAI-compatible transcription (OpenAI, faster-whisper-server, whisper.cpp server,
// LocalAI, vLLM …): `POST {base}/audio/transcriptions`, multipart/form-data with `file` (a WAV of
// the utterance), `model`, `language` when known, `response_format=verbose_json` (which adds
// `language` and `segments`). The API is per file, not streaming, so the pipeline's VAD cuts the
// utterances; partials come from re-transcribing the growing utterance at most once per
// `partialIntervalMs` of new audio. Cost: with a 1 s interval an utterance of N seconds is sent
// about N(N+1)/2 audio-seconds for partials plus N for the final (a 5 s turn: ~20 s billed);
// `partialIntervalMs: 0` sends only the final. At most one partial request per stream is in flight.
import { encodeWav, SAMPLE_RATE } from '../../../media/index.js';
import { SafeEmitter } from '../../../events/index.js';
import { EngineEndpoint, EngineHttpError, type EndpointPolicy } from '../../http/engine-endpoint.js';
import type { SttEngine, SttErrorCode, SttFinal, SttStream, SttStreamEvents } from '../../types.js';
import { WHISPER_LANGUAGES, whisperLanguageToIso1 } from '../../whisper-languages.js';

export interface OpenAiSttOptions {
  /** Base URL including the version path, e.g. https://api.openai.com/v1 or http://host:8000/v1. */
  url: string;
  model: string;
  /** Resolves the API key at request time (a secret name, rotated without restart); null: none sent. */
  apiKey: () => Promise<string | null>;
  policy: EndpointPolicy;
  /** Re-transcribe for a partial after this much new audio; 0 disables partials. */
  partialIntervalMs: number;
  /** Languages offered to planning (default: Whisper's list). */
  languages?: string[];
  /** Longest utterance kept; later audio of the same utterance is dropped (memory bound). */
  maxUtteranceMs?: number;
  onListenerError?: (err: unknown) => void;
}

interface VerboseJson {
  text?: string;
  language?: string;
  segments?: Array<{ avg_logprob?: number; no_speech_prob?: number }>;
}

const FRAMES_PER_SECOND = 50;

export class OpenAiStt implements SttEngine {
  readonly name = 'openai';
  readonly detectsLanguage = true;
  readonly endpoint: EngineEndpoint;
  private readonly streams = new Set<OpenAiSttStream>();

  constructor(private readonly opts: OpenAiSttOptions) {
    this.endpoint = new EngineEndpoint(`transcription server ${new URL(opts.url).host}`, opts.policy);
  }

  languages(): string[] {
    return this.opts.languages ?? WHISPER_LANGUAGES;
  }

  openStream(opts: { language: string; detect?: boolean }): SttStream {
    const s = new OpenAiSttStream(this, opts.language, opts.detect ?? false, () => this.streams.delete(s));
    if (this.opts.onListenerError) s.onListenerError(this.opts.onListenerError);
    this.streams.add(s);
    return s;
  }

  /** One transcription request; the audio is sent as a WAV file at the pipeline's 8 kHz. */
  async transcribe(pcm: Int16Array, language: string | null): Promise<SttFinal> {
    const wav = encodeWav(pcm, SAMPLE_RATE);
    const key = await this.opts.apiKey();
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    const res = await this.endpoint.fetch(`${this.opts.url.replace(/\/$/, '')}/audio/transcriptions`, () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'utterance.wav');
      form.append('model', this.opts.model);
      form.append('response_format', 'verbose_json');
      if (language) form.append('language', language);
      return { method: 'POST', body: form, headers };
    });
    let body: VerboseJson;
    try {
      body = (await res.json()) as VerboseJson;
    } catch (err) {
      this.endpoint.recordFailure();
      throw new EngineHttpError('unavailable', `${this.endpoint.label}: unreadable answer: ${(err as Error).message}`);
    }
    const text = (body.text ?? '').trim();
    const final: SttFinal = { text };
    const logprobs = (body.segments ?? []).map((s) => s.avg_logprob).filter((v): v is number => typeof v === 'number');
    // Whisper gives no confidence; exp(mean avg_logprob) is the usual stand-in (1 = certain).
    if (text && logprobs.length) final.confidence = Math.min(1, Math.exp(logprobs.reduce((a, b) => a + b, 0) / logprobs.length));
    const detected = whisperLanguageToIso1(body.language);
    if (detected) final.language = detected;
    return final;
  }

  get partialIntervalMs(): number {
    return this.opts.partialIntervalMs;
  }

  get maxFrames(): number {
    return Math.ceil((this.opts.maxUtteranceMs ?? 60_000) / 20);
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
  }
}

/** Maps a request failure to the STT error codes the pipeline reports. */
function sttCode(err: unknown): SttErrorCode {
  return err instanceof EngineHttpError && err.kind === 'timeout' ? 'stt_timeout' : 'stt_unavailable';
}

class OpenAiSttStream extends SafeEmitter<SttStreamEvents> implements SttStream {
  private frames: Int16Array[] = [];
  private framesAtLastPartial = 0;
  private partialInFlight = false;
  /** Bumped per utterance: answers for an older utterance are not partials of this one. */
  private generation = 0;
  /** Finals are delivered in utterance order even when a later request answers first. */
  private tail: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly engine: OpenAiStt,
    readonly language: string,
    private readonly detect: boolean,
    private readonly onClosed: () => void,
  ) {
    super();
  }

  write(frame: Int16Array): void {
    if (this.closed || this.frames.length >= this.engine.maxFrames) return;
    this.frames.push(frame.slice());
    const interval = this.engine.partialIntervalMs;
    const newFrames = this.frames.length - this.framesAtLastPartial;
    if (interval > 0 && !this.partialInFlight && newFrames * 20 >= interval) this.requestPartial();
  }

  endUtterance(): void {
    if (this.closed) return;
    const pcm = concat(this.frames);
    this.frames = [];
    this.framesAtLastPartial = 0;
    this.generation++;
    const result = pcm.length === 0 ? Promise.resolve<SttFinal>({ text: '' }) : this.engine.transcribe(pcm, this.detect ? null : this.language);
    this.tail = this.tail.then(() =>
      result.then(
        (final) => {
          if (!this.closed) this.safeEmit('final', final);
        },
        (err: unknown) => {
          if (!this.closed) this.safeEmit('error', { code: sttCode(err), message: (err as Error).message });
        },
      ),
    );
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.frames = [];
    this.onClosed();
  }

  private requestPartial(): void {
    // Only once there is a second of speech: shorter audio rarely transcribes to anything useful.
    if (this.frames.length < FRAMES_PER_SECOND) return;
    this.partialInFlight = true;
    this.framesAtLastPartial = this.frames.length;
    const generation = this.generation;
    this.engine
      .transcribe(concat(this.frames), this.detect ? null : this.language)
      .then(
        (r) => {
          if (!this.closed && generation === this.generation && r.text) this.safeEmit('partial', { text: r.text });
        },
        () => undefined, // a failed partial is not an utterance failure; the final will tell
      )
      .finally(() => {
        this.partialInFlight = false;
      });
  }
}

function concat(frames: Int16Array[]): Int16Array {
  const out = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let off = 0;
  for (const f of frames) {
    out.set(f, off);
    off += f.length;
  }
  return out;
}
