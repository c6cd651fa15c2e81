// The contract between the session pipeline and the things that carry a party's audio in and out
// (the WebSocket stream in stream/, SIP legs in telephony/). Kept small and stable on purpose:
// stream/ and telephony/ depend only on this file and on sessions/index.ts.

export type Party = 'agent' | 'customer';
export const PARTIES: readonly Party[] = ['agent', 'customer'];
export const otherParty = (p: Party): Party => (p === 'agent' ? 'customer' : 'agent');

/** 20 ms of PCM16 mono audio at 8 kHz: exactly FRAME_SAMPLES samples. */
export type PcmFrame = Int16Array;
export const SAMPLE_RATE = 8000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = 160;

export interface TranscriptPartial {
  speaker: Party;
  language: string;
  text: string;
}

export interface TranscriptFinal {
  sequence: number;
  speaker: Party;
  language: string;
  text: string;
  confidence?: number;
  timestamp: string;
  translation?: { language: string; text: string };
  /** Agent modes: the agent's reply was cut off by the customer; `text` is what was heard. */
  interrupted?: boolean;
}

/** Dials a party's leg for a session (telephony's outbound dial, wired by the composition root). */
export type PartyDialer = (sessionId: string, orgId: string, req: { party: Party; to: string }) => Promise<void>;

/** Synthesized (or bridged) audio the pipeline wants a party to hear, one 20 ms frame at a time, paced in real time. */
export interface OutputFrame {
  /** The party that should hear it. */
  to: Party;
  /** Label for the socket's `audio.output.speaker`, e.g. `translated_agent`. */
  speaker: string;
  frame: PcmFrame;
  /** Milliseconds on the session's output timeline for this party (the socket's `timestamp_ms`). */
  timestampMs?: number;
}

export interface SessionErrorInfo {
  code: string;
  message: string;
}

/** Events a live session emits; stream/ forwards them to the socket, telephony/ plays `output` to legs. */
export interface LiveSessionEvents {
  ready: [];
  partial: [TranscriptPartial];
  final: [TranscriptFinal];
  /** Fires only for parties without an attached leg: a leg plays its party's frames itself. */
  output: [OutputFrame];
  error: [SessionErrorInfo];
  ended: [{ reason: string }];
}

/**
 * What the recorder's tap (LiveSession.onTap) gets: one 20 ms frame on one side of the conversation.
 * `side` is the party whose speech it is — what the party said, or speech voiced on its behalf for
 * the other party to hear (translated or AI speech). `atMs` is its position on the session timeline
 * (ms since the session's first audio).
 */
export interface AudioTap {
  side: Party;
  origin: 'said' | 'voiced';
  frame: PcmFrame;
  atMs: number;
}

/** A phone leg (or any non-socket carrier) attached to a party. */
export interface PartyLeg {
  readonly party: Party;
  readonly kind: 'sip';
  /** Play one 20 ms frame to the far end. */
  playFrame(frame: PcmFrame): void;
  /** Drops audio queued for the far end and not yet sent (barge-in); optional. */
  clearOutput?(): void;
  /** Hang the leg up (BYE); idempotent. */
  close(reason: string): void;
}
