// The agent's voice in ai_agent / help_chat_voice sessions. `AgentSpeechStage` (before the pacer)
// synthesizes what the agent says sentence by sentence, so playback starts with the first sentence
// while the rest is synthesized; `AgentPlayoutTracker` (after the pacer) counts the frames actually
// played, and when a reply has been heard in full, or was cut off by a barge-in, emits the agent's
// transcript_final with only what was played (`interrupted` set when cut).
import type { TtsEngine, VoiceSettings } from '../../speech/index.js';
import { FRAME_SAMPLES } from '../contracts.js';
import type { Frame } from '../frames.js';
import { FrameProcessor } from './processor.js';

export const AGENT_SPEAKER_LABEL = 'agent';

export interface SpokenReply {
  spoken: string;
  interrupted: boolean;
}

interface Segment {
  reply: Reply;
  text: string;
  frames: number;
  played: number;
}

interface Reply {
  sentences: string[];
  /** Sentences fully heard. */
  heard: string[];
  /** Synthesis of every sentence has been queued (or failed). */
  synthesized: boolean;
  queuedSegments: number;
  startMs: number;
  done: boolean;
  resolve(r: SpokenReply): void;
}

/** What the speech stage and the playout tracker share: replies and their queued segments, in play order. */
export class AgentSpeechLedger {
  readonly segments: Segment[] = [];
  readonly replies: Reply[] = [];
  /** Bumped by a barge-in: syntheses started before it are dropped. */
  generation = 0;

  get speaking(): boolean {
    return this.replies.length > 0;
  }
}

export interface AgentSpeechOptions {
  tts: TtsEngine | null;
  voice: VoiceSettings;
  language: string;
  /** Session timeline now, ms (transcript start/end of agent turns). */
  timelineMs(): number;
}

export class AgentSpeechStage extends FrameProcessor {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly ledger: AgentSpeechLedger,
    private readonly opts: AgentSpeechOptions,
  ) {
    super();
  }

  process(frame: Frame): void {
    this.push(frame);
  }

  /**
   * Speaks `text` to the customer; resolves when it has been heard or cut off. With `hold`, the
   * sentences are synthesized now but queued for playout only once `hold` resolves true (false: the
   * reply is dropped unheard); later replies wait behind it.
   */
  say(text: string, splitSentences: (t: string) => string[], hold?: Promise<boolean>): Promise<SpokenReply> {
    return new Promise<SpokenReply>((resolve) => {
      const sentences = splitSentences(text);
      const reply: Reply = { sentences, heard: [], synthesized: false, queuedSegments: 0, startMs: this.opts.timelineMs(), done: false, resolve };
      if (this.closed || sentences.length === 0) return resolve({ spoken: '', interrupted: false });
      this.ledger.replies.push(reply);
      const generation = this.ledger.generation;
      // Every sentence starts synthesizing now; they are queued for playout in order.
      const audio = sentences.map((s) => this.synthesize(s));
      const release = hold ?? Promise.resolve(true);
      sentences.forEach((sentence, i) => {
        this.tail = this.tail
          .then(() => Promise.all([audio[i], release]))
          .then(([pcm, go]) => {
            if (!go || reply.done || generation !== this.ledger.generation || this.closed) return;
            if (i === 0 && hold) reply.startMs = this.opts.timelineMs(); // heard from now, not when prepared
            if (!pcm || pcm.length === 0) {
              reply.heard.push(sentence); // no voice (no TTS): the text still counts as said
              return;
            }
            this.ledger.segments.push({ reply, text: sentence, frames: Math.ceil(pcm.length / FRAME_SAMPLES), played: 0 });
            reply.queuedSegments++;
            this.push({ kind: 'tts_audio', to: 'customer', speaker: AGENT_SPEAKER_LABEL, pcm });
          });
      });
      this.tail = this.tail.then(() => {
        reply.synthesized = true;
        if (reply.queuedSegments === 0 && !reply.done) this.finish(reply, false);
      });
    });
  }

  /**
   * Drops what the agent has queued or is playing, as a barge-in does (the tracker keeps what was
   * heard, marked interrupted): a reply started early whose final asked something else.
   */
  cancel(): void {
    if (this.ledger.speaking && !this.closed) this.push({ kind: 'interruption', party: 'customer' });
  }

  /** Emits the reply's transcript and resolves its promise (also used by the tracker). */
  finish(reply: Reply, interrupted: boolean, partial = ''): void {
    if (reply.done) return;
    reply.done = true;
    const i = this.ledger.replies.indexOf(reply);
    if (i >= 0) this.ledger.replies.splice(i, 1);
    const spoken = [...reply.heard, partial].filter(Boolean).join(' ').trim();
    if (spoken) {
      this.push({
        kind: 'transcript_final',
        party: 'agent',
        language: this.opts.language,
        text: spoken,
        startMs: reply.startMs,
        endMs: this.opts.timelineMs(),
        ...(interrupted ? { interrupted: true } : {}),
      });
    }
    reply.resolve({ spoken, interrupted });
  }

  private async synthesize(text: string): Promise<Int16Array | null> {
    if (!this.opts.tts) return null;
    try {
      return await this.opts.tts.synthesize(text, this.opts.language, this.opts.voice, (n) =>
        this.push({ kind: 'error', code: 'engine_error', message: n.message }),
      );
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'tts_failed';
      this.push({
        kind: 'error',
        code: 'engine_error',
        message: `speech synthesis (${this.opts.language}) of the agent's reply failed (${code}): ${(err as Error).message}`,
      });
      return null;
    }
  }
}

/** After the pacer: counts played agent frames; on a customer barge-in keeps what was heard. */
export class AgentPlayoutTracker extends FrameProcessor {
  constructor(
    private readonly ledger: AgentSpeechLedger,
    private readonly speech: AgentSpeechStage,
  ) {
    super();
  }

  process(frame: Frame): void {
    if (frame.kind === 'playout' && frame.to === 'customer' && frame.speaker === AGENT_SPEAKER_LABEL) {
      this.push(frame);
      this.played();
      return;
    }
    if (frame.kind === 'interruption' && frame.party === 'customer') {
      this.push(frame);
      this.interrupt();
      return;
    }
    this.push(frame);
  }

  private played(): void {
    const seg = this.ledger.segments[0];
    if (!seg) return;
    seg.played++;
    if (seg.played < seg.frames) return;
    this.ledger.segments.shift();
    const reply = seg.reply;
    reply.heard.push(seg.text);
    reply.queuedSegments--;
    if (reply.synthesized && reply.queuedSegments === 0) this.speech.finish(reply, false);
  }

  /** The pacer has dropped the queued audio: every reply in flight ends with what was heard. */
  private interrupt(): void {
    if (!this.ledger.speaking) return;
    this.ledger.generation++;
    const current = this.ledger.segments[0];
    // The sentence being played counts up to the words already heard (proportional to frames played).
    const partial =
      current && current.played > 0
        ? current.text
            .split(/\s+/)
            .slice(0, Math.floor((current.played / current.frames) * current.text.split(/\s+/).length))
            .join(' ')
        : '';
    this.ledger.segments.length = 0;
    for (const reply of [...this.ledger.replies]) this.speech.finish(reply, true, reply === current?.reply ? partial : '');
  }
}
