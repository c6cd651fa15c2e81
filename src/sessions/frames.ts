// The frames that flow through a live session's pipeline (pipecat `frames.py` style): one
// discriminated union, so every stage switches on `kind` and passes on what it does not handle.
import type { Party, PcmFrame } from './contracts.js';

/** 20 ms of a party's input audio; `mediaMs` is its position on the session timeline. */
export interface AudioFrame {
  kind: 'audio';
  party: Party;
  pcm: PcmFrame;
  mediaMs: number;
}

/** Speech began; `preroll` is the audio just before it, so the recognizer hears the onset. */
export interface VadStartFrame {
  kind: 'vad_start';
  party: Party;
  mediaMs: number;
  preroll: PcmFrame[];
}

export interface VadEndFrame {
  kind: 'vad_end';
  party: Party;
  mediaMs: number;
}

export interface TranscriptPartialFrame {
  kind: 'transcript_partial';
  party: Party;
  language: string;
  text: string;
}

/**
 * The recognizer has decoded all of an ended utterance's audio (engines that report progress):
 * its hypothesis before the final, for the agent's turn-taking. Not sent to clients.
 */
export interface TranscriptProgressFrame {
  kind: 'transcript_progress';
  party: Party;
  text: string;
  /** The utterance's bounds on the session timeline, as its final will carry them. */
  startMs: number;
  endMs: number;
  /** Audio written to the recognizer for the utterance, ms. */
  writtenMs: number;
  /** Audio decoded, and audio over which `text` has not changed, ms. */
  decodedMs: number;
  stableMs: number;
}

/** An ended utterance that gets no transcript_final (silence or noise, or the recognizer failed). */
export interface TranscriptNoneFrame {
  kind: 'transcript_none';
  party: Party;
  startMs: number;
}

export interface TranscriptFinalFrame {
  kind: 'transcript_final';
  party: Party;
  language: string;
  text: string;
  confidence?: number;
  /** Utterance bounds on the session timeline, ms. */
  startMs: number;
  endMs: number;
  /** Set by the translate stage when translation ran. */
  translation?: { language: string; text: string };
  /** An agent reply cut off by the customer (barge-in): `text` is what was played. */
  interrupted?: boolean;
}

/** A final's text in another language; `speakTo` asks the TTS stage to voice it to that party. */
export interface TranslationFrame {
  kind: 'translation';
  party: Party;
  from: string;
  to: string;
  text: string;
  speakTo: Party | null;
}

/** Synthesized speech (any length, 8 kHz PCM16) for a party to hear; the pacer cuts it into frames. */
export interface TtsAudioFrame {
  kind: 'tts_audio';
  to: Party;
  /** `audio.output.speaker` label, e.g. `translated_agent`. */
  speaker: string;
  pcm: Int16Array;
}

/** One 20 ms frame for a party to hear, queued for pacing (bridged original audio). */
export interface OutputAudioFrame {
  kind: 'output_audio';
  to: Party;
  speaker: string;
  pcm: PcmFrame;
}

/** One 20 ms frame released by the pacer on the media clock: play it now. */
export interface PlayoutFrame {
  kind: 'playout';
  to: Party;
  speaker: string;
  pcm: PcmFrame;
  /** Media-clock time of this frame since the session's output started, ms. */
  timestampMs: number;
}

/** Barge-in: drop audio queued for `party` (jumps every queue). */
export interface InterruptionFrame {
  kind: 'interruption';
  party: Party;
}

export interface ErrorFrame {
  kind: 'error';
  code: string;
  message: string;
  party?: Party;
}

export interface EndFrame {
  kind: 'end';
  reason: string;
}

export type Frame =
  | AudioFrame
  | VadStartFrame
  | VadEndFrame
  | TranscriptPartialFrame
  | TranscriptProgressFrame
  | TranscriptNoneFrame
  | TranscriptFinalFrame
  | TranslationFrame
  | TtsAudioFrame
  | OutputAudioFrame
  | PlayoutFrame
  | InterruptionFrame
  | ErrorFrame
  | EndFrame;

export type FrameKind = Frame['kind'];
