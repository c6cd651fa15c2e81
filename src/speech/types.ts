// Engine interfaces the session pipeline talks to. Implementations live in stt/, translate/, tts/;
// createEngines() (index.ts) picks them from configuration.
import type { EventEmitter } from 'node:events';

export interface SttPartial {
  text: string;
  /** Engines that report decoding progress: the utterance's audio decoded when `text` was taken. */
  decodedMs?: number;
  /** With `complete`: audio (at least) over which the hypothesis has not changed. */
  stableMs?: number;
  /**
   * The hypothesis after every frame written before endUtterance() was decoded, sent before the
   * final (pocketsphinx: before its end-of-utterance search). May repeat the previous partial's text.
   */
  complete?: boolean;
}

export interface SttFinal {
  /** Empty when nothing was recognized. */
  text: string;
  /** 0..1 where the engine gives one. */
  confidence?: number;
  /** ISO 639-1 code the engine detected (only from engines that detect, on streams opened with `detect`). */
  language?: string;
}

export type SttErrorCode =
  | 'stt_timeout' // no result within engines.stt.timeoutMs of endUtterance()
  | 'stt_engine_crashed' // the decoder serving the utterance died; it is restarted
  | 'stt_unavailable' // the engine cannot serve (not started, remote down)
  | 'stt_overloaded'; // too much audio queued waiting for a decoder

export interface SttError {
  code: SttErrorCode;
  message: string;
}

/** A stage's remote engine failed and the embedded engine took over (reported as `engine_error`). */
export interface EngineFallback {
  message: string;
}

/** Called by a fallback-wrapped translator or synthesizer when the embedded engine served the call. */
export type FallbackNotice = (fallback: EngineFallback) => void;

export interface SttStreamEvents {
  partial: [SttPartial];
  final: [SttFinal];
  error: [SttError];
  /** The stream's remote engine failed; the utterance in flight and the rest go to the embedded engine. */
  fallback: [EngineFallback];
}

/**
 * One party's recognition stream. The pipeline calls write() only between a VAD start and
 * endUtterance(). Every utterance ends in exactly one 'final' (text may be empty) or, if the
 * engine failed it, exactly one 'error'; the next write() starts a new utterance either way.
 */
export interface SttStream extends EventEmitter<SttStreamEvents> {
  readonly language: string;
  /** One 20 ms frame: 160 samples of PCM16 at 8 kHz. Copied if it must be queued. */
  write(frame: Int16Array): void;
  endUtterance(): void;
  /** Drops any utterance in progress (no further events); idempotent. */
  close(): void;
}

export interface SttEngine {
  readonly name: string;
  /** ISO 639-1 codes it can transcribe. */
  languages(): string[];
  /** True when finals can carry the detected `language` (streams opened with `detect: true`). */
  readonly detectsLanguage?: boolean;
  /**
   * `language` is the expected language; with `detect` the engine is not told it and reports
   * what it heard on each final instead (engines that cannot detect ignore `detect`).
   */
  openStream(opts: { language: string; detect?: boolean }): SttStream;
  close(): Promise<void>;
}

export interface Translator {
  readonly name: string;
  pairs(): Array<{ from: string; to: string }>;
  supports(from: string, to: string): boolean;
  /** `onFallback`: told when the embedded engine served the call instead (see fallback.ts). */
  translate(text: string, from: string, to: string, onFallback?: FallbackNotice): Promise<string>;
  close(): Promise<void>;
}

export interface VoiceSettings {
  voice_id?: string;
  stability?: number;
  similarity_boost?: number;
  /** 1 = normal speed. */
  speed?: number;
}

export interface TtsEngine {
  readonly name: string;
  languages(): string[];
  /** PCM16 mono at 8 kHz. */
  synthesize(text: string, language: string, voice: VoiceSettings, onFallback?: FallbackNotice): Promise<Int16Array>;
  /** Streaming engines: 8 kHz PCM16 chunks as the server sends them, so playback starts early. */
  synthesizeStream?(text: string, language: string, voice: VoiceSettings, onFallback?: FallbackNotice): AsyncIterable<Int16Array>;
  close(): Promise<void>;
}

/** What the engines offer, as data (providers and their languages), for reports and tests. */
export interface EngineCatalog {
  stt: { provider: string; languages: string[] };
  translate: { provider: string; pairs: Array<{ from: string; to: string }> };
  tts: { provider: string; languages: string[] };
}

/**
 * What capability planning asks of the engines (sessions/ planPipeline, the API's create check):
 * questions only, so a plan can be made without opening any stream. `Engines` satisfies it.
 */
export interface EngineCapabilities {
  canTranscribe(language: string): boolean;
  canTranslate(from: string, to: string): boolean;
  canSpeak(language: string): boolean;
  /** Whether the STT engine reports the language it heard (null session languages are then detected). */
  detectsLanguage?(): boolean;
}

export interface Engines extends EngineCapabilities {
  stt: SttEngine | null;
  translator: Translator | null;
  tts: TtsEngine | null;
  capabilities(): EngineCatalog;
  detectsLanguage(): boolean;
  /** Stops every engine (decoder processes included); idempotent. */
  close(): Promise<void>;
}

/** Failure of a translate or TTS call (the caller decides whether to skip or end the turn). */
export class SpeechEngineError extends Error {
  constructor(
    readonly code: 'translate_failed' | 'translate_timeout' | 'translate_unsupported' | 'tts_failed' | 'tts_timeout' | 'tts_unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'SpeechEngineError';
  }
}
