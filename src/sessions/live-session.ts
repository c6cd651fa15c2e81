// One live session on this node: the pipeline of its mode, the legs attached to its parties, and the
// events stream/ and telephony/ consume (LiveSessionEvents). close() is idempotent and closes the
// children: legs, then pipeline stages (and with them the STT streams).
import type { Logger } from 'pino';
import type { Engines, VoiceSettings } from '../speech/index.js';
import type { VadChoice } from './processors/vad.js';
import {
  FRAME_MS,
  otherParty,
  type AudioTap,
  type LiveSessionEvents,
  type OutputFrame,
  type Party,
  type PartyLeg,
  type PcmFrame,
  type TranscriptFinal,
} from './contracts.js';
import type { Frame } from './frames.js';
import type { TickSource } from './media-clock.js';
import type { SessionMode } from './modes.js';
import { buildPipeline, planPipeline, type Pipeline, type PipelinePlan } from './pipeline.js';
import type { OutputPacerOptions } from './processors/pacer.js';
import { SafeEmitter } from '../events/index.js';
import { ORIGINAL_SPEAKER_LABEL } from './processors/bridge.js';
import { splitSentences, type AgentHost, type AgentRuntime, type TransferOutcome } from '../agents/index.js';

/** An `output` event as emitted: the contract's OutputFrame plus its media-clock time. */
export type SessionOutput = OutputFrame & { timestampMs: number };

/** Frames of a party's audio per activity mark (1 s). */
const ACTIVITY_EVERY_FRAMES = 50;

/** A final as it is stored (transcript_turns + `transcript.segment`). */
export interface StoredTurn extends TranscriptFinal {
  /** Seconds from the session's first audio. */
  startTime: number;
  endTime: number;
}

export interface LiveSessionHooks {
  /** First audio frame of the session (created → active). */
  firstAudio(): void;
  /** Audio or a message arrived (throttling is the hook's job). */
  activity(): void;
  /** Persists a final; called in sequence order, one at a time. */
  storeTurn(turn: StoredTurn): Promise<void>;
  /** A leg was attached or detached (the registry's reconnect grace counts carriers). */
  legsChanged?(): void;
  /** Agent modes: writes an outbox event for the session. */
  recordEvent?(type: string, data: Record<string, unknown>): Promise<void>;
  /** Agent modes: dials a leg for a party (escalation transfer); absent without telephony. */
  dialParty?(req: { party: Party; to: string }): Promise<void>;
  /** Agent modes: the agent ends the session. */
  end?(reason: string): void;
  /** A null language was detected by the STT engine (the session object shows it from then on). */
  languageDetected?(party: Party, language: string): void;
}

/** The AI agent of an ai_agent / help_chat_voice session. */
export interface LiveAgentOptions {
  /** Builds the session's conversation runtime around the host the session provides. */
  createRuntime(host: AgentHost): AgentRuntime;
  /** Language the agent speaks. */
  language: string;
  bargeInMinSpeechMs?: number;
  onBargeIn?(): void;
  earlyPartial?: boolean;
}

export interface LiveSessionOptions {
  id: string;
  orgId: string;
  mode: SessionMode;
  sourceLanguage: string | null;
  targetLanguage: string | null;
  voice: VoiceSettings;
  engines: Engines;
  defaultLanguage: string;
  clock: TickSource;
  hooks: LiveSessionHooks;
  /** The session has phone routing: `ready` waits for a leg to be attached (connected). */
  awaitsLeg: boolean;
  /** Sequence of the last stored turn (a session reopened on this node continues from it). */
  lastSequence?: number;
  vad?: VadChoice;
  bargeIn?: boolean;
  /** The output pacer's live margin bounds. */
  pacer?: OutputPacerOptions;
  agent?: LiveAgentOptions;
  /** Bound to the session already (session_id); the session does not add it again. */
  logger?: Logger;
}

export class LiveSession extends SafeEmitter<LiveSessionEvents> {
  readonly id: string;
  readonly orgId: string;
  readonly mode: SessionMode;
  readonly plan: PipelinePlan;
  private readonly pipeline: Pipeline;
  private readonly hooks: LiveSessionHooks;
  private readonly legs = new Map<Party, PartyLeg>();
  private isReady: boolean;
  private isClosed = false;
  private endReason: string | null = null;
  private sequence: number;
  private storeTail: Promise<void> = Promise.resolve();
  /** Wall-clock ms of the session's first audio; the transcript timeline starts there. */
  private t0 = -1;
  private readonly partyOffsetMs: Record<Party, number> = { agent: -1, customer: -1 };
  private readonly partyFrames: Record<Party, number> = { agent: 0, customer: 0 };
  /** The agent runtime in the agent modes (null in translation modes or without an agent). */
  readonly agentRuntime: AgentRuntime | null = null;
  private bargeInAt = -1;
  /** The recorder's sink (onTap): a field read per frame, where an event needed a listener lookup on every frame. */
  private tap: ((tap: AudioTap) => void) | null = null;

  constructor(opts: LiveSessionOptions) {
    super(opts.logger);
    this.id = opts.id;
    this.orgId = opts.orgId;
    this.mode = opts.mode;
    this.hooks = opts.hooks;
    this.isReady = !opts.awaitsLeg;
    this.sequence = opts.lastSequence ?? 0;
    this.plan = planPipeline(
      { mode: opts.mode, source_language: opts.sourceLanguage, target_language: opts.targetLanguage },
      opts.engines,
      opts.defaultLanguage,
    );
    const agent = opts.agent;
    this.pipeline = buildPipeline(
      {
        plan: this.plan,
        engines: opts.engines,
        voice: opts.voice,
        clock: opts.clock,
        vad: opts.vad,
        bargeIn: opts.bargeIn,
        pacer: opts.pacer,
        agent: agent && {
          language: agent.language,
          bargeInMinSpeechMs: agent.bargeInMinSpeechMs,
          earlyPartial: agent.earlyPartial,
          onBargeIn: () => {
            this.bargeInAt = performance.now();
            agent.onBargeIn?.();
          },
          timelineMs: () => (this.t0 < 0 ? 0 : Date.now() - this.t0),
          turns: {
            final: (text) => this.agentRuntime?.customerSaid(text),
            early: (text) => this.agentRuntime?.customerSaidEarly(text) ?? false,
            settle: (text) => this.agentRuntime?.customerFinalAfterEarly(text),
          },
        },
        defaultLanguage: opts.defaultLanguage,
        onLanguageDetected: (party, language) => this.hooks.languageDetected?.(party, language),
      },
      this.onFrame,
    );
    if (agent) this.agentRuntime = agent.createRuntime(this.agentHost());
  }

  /** What the agent runtime may do with this session. */
  private agentHost(): AgentHost {
    const stages = this.pipeline.agent!;
    return {
      sessionId: this.id,
      orgId: this.orgId,
      say: (text, hold) => stages.speech.say(text, splitSentences, hold),
      recordEvent: async (type, data) => {
        await this.hooks.recordEvent?.(type, data);
      },
      transfer: async (to): Promise<TransferOutcome> => {
        if (!this.legs.has('customer') || !this.hooks.dialParty) return 'not_possible';
        try {
          await this.hooks.dialParty({ party: 'agent', to });
        } catch (err) {
          this.log?.warn({ err, to }, 'escalation transfer failed');
          return 'failed';
        }
        if (this.isClosed) return 'failed';
        stages.handoff.bridged = true;
        return 'transferred';
      },
      end: (reason) => {
        if (this.hooks.end) this.hooks.end(reason);
        else this.close(reason);
      },
      cancelSpeech: () => stages.speech.cancel(),
    };
  }

  /** performance.now() of the last barge-in (the customer cut the agent off), -1 if none (tests, benchmarks). */
  get lastBargeInAt(): number {
    return this.bargeInAt;
  }

  /** A carrier (socket or leg) is attached: in the agent modes a ready session starts its greeting. */
  carrierAttached(): void {
    if (this.isReady && !this.isClosed) this.agentRuntime?.start();
  }

  get ready(): boolean {
    return this.isReady;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Why the session ended, once closed. */
  get reason(): string | null {
    return this.endReason;
  }

  /** Gives every frame said or voiced on either side to `sink` (the recorder), or stops with null. */
  onTap(sink: ((tap: AudioTap) => void) | null): void {
    this.tap = sink;
  }

  /** Frames queued for a party's ears (tests, metrics). */
  queuedOutput(party: Party): number {
    return this.pipeline.pacer.queued(party);
  }

  /**
   * One 20 ms frame of a party's audio. The session keeps the frame (the VAD preroll holds it by
   * reference): callers hand over a fresh array each time (Framer output does).
   */
  pushAudio(party: Party, frame: PcmFrame): void {
    if (this.isClosed) return;
    if (this.partyOffsetMs[party] < 0) {
      // One reading of the clock: the party whose frame starts the session starts at 0 on its timeline.
      const now = Date.now();
      if (this.t0 < 0) {
        this.t0 = now;
        this.hooks.firstAudio();
      }
      this.partyOffsetMs[party] = now - this.t0;
    }
    const mediaMs = this.partyOffsetMs[party] + this.partyFrames[party] * FRAME_MS;
    // Activity is kept to the second (the inactivity rule counts minutes): every 50th frame, not each one.
    if (this.partyFrames[party]++ % ACTIVITY_EVERY_FRAMES === 0) this.hooks.activity();
    if (this.tap) this.callSink(this.tap, { side: party, origin: 'said', frame, atMs: mediaMs }, 'tap');
    this.pipeline.input.process({ kind: 'audio', party, pcm: frame, mediaMs });
  }

  /** A message or other sign of life that is not audio (inactivity rule). */
  noteActivity(): void {
    if (!this.isClosed) this.hooks.activity();
  }

  /**
   * Attaches a connected phone leg to its party: output for that party goes to the leg instead of
   * the `output` event. The first leg makes a session that awaits one `ready`. Returns detach().
   */
  attachLeg(leg: PartyLeg): () => void {
    if (this.isClosed) {
      leg.close(this.endReason ?? 'session_ended');
      return () => undefined;
    }
    this.legs.set(leg.party, leg);
    this.hooks.legsChanged?.();
    if (!this.isReady) {
      this.isReady = true;
      this.safeEmit('ready');
    }
    this.carrierAttached();
    return () => {
      if (this.legs.get(leg.party) !== leg) return;
      this.legs.delete(leg.party);
      if (!this.isClosed) this.hooks.legsChanged?.();
    };
  }

  legOf(party: Party): PartyLeg | undefined {
    return this.legs.get(party);
  }

  get legCount(): number {
    return this.legs.size;
  }

  /** Ends the live session: `ended` is emitted once, legs are hung up, engines released. Idempotent. */
  close(reason: string): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.endReason = reason;
    this.safeEmit('ended', { reason });
    for (const leg of this.legs.values()) {
      try {
        leg.close(reason);
      } catch (err) {
        this.log?.warn({ err }, 'leg close failed');
      }
    }
    this.legs.clear();
    this.agentRuntime?.close();
    // The end frame travels the chain first (pipecat EndFrame), then every stage is closed.
    this.pipeline.input.process({ kind: 'end', reason });
    for (const stage of this.pipeline.stages) stage.close();
    this.removeAllListeners();
  }

  /** Resolves when every final so far is stored (tests, shutdown). */
  flushStore(): Promise<void> {
    return this.storeTail;
  }

  private mediaMsOf(p: Party): number {
    return this.partyOffsetMs[p] < 0 ? 0 : this.partyOffsetMs[p] + this.partyFrames[p] * FRAME_MS;
  }

  /** The pipeline's sink: frames become events, leg audio and stored turns. */
  private readonly onFrame = (frame: Frame): void => {
    if (this.isClosed) return;
    switch (frame.kind) {
      case 'playout': {
        // Recorder tap: speech voiced for the other side (bridged originals are already taped as said).
        if (this.tap && this.t0 >= 0 && frame.speaker !== ORIGINAL_SPEAKER_LABEL(otherParty(frame.to))) {
          this.callSink(this.tap, { side: otherParty(frame.to), origin: 'voiced', frame: frame.pcm, atMs: Date.now() - this.t0 }, 'tap');
        }
        const leg = this.legs.get(frame.to);
        if (leg) {
          leg.playFrame(frame.pcm);
        } else {
          const out: SessionOutput = { to: frame.to, speaker: frame.speaker, frame: frame.pcm, timestampMs: frame.timestampMs };
          this.safeEmit('output', out);
        }
        return;
      }
      case 'transcript_partial':
        this.safeEmit('partial', { speaker: frame.party, language: frame.language, text: frame.text });
        return;
      case 'transcript_final': {
        const final: TranscriptFinal = {
          sequence: ++this.sequence,
          speaker: frame.party,
          language: frame.language,
          text: frame.text,
          ...(frame.confidence !== undefined ? { confidence: frame.confidence } : {}),
          timestamp: new Date().toISOString(),
          ...(frame.translation ? { translation: frame.translation } : {}),
          ...(frame.interrupted ? { interrupted: true } : {}),
        };
        const turn: StoredTurn = { ...final, startTime: frame.startMs / 1000, endTime: frame.endMs / 1000 };
        this.storeTail = this.storeTail
          .then(() => this.hooks.storeTurn(turn))
          .catch((err) => {
            this.log?.error({ err, sequence: turn.sequence }, 'storing transcript turn failed');
          });
        this.safeEmit('final', final);
        return;
      }
      case 'interruption':
        // Barge-in: what the leg's RTP sender still holds goes too (the pacer's queue is already dropped).
        this.legs.get(frame.party)?.clearOutput?.();
        return;
      case 'error':
        this.log?.error({ code: frame.code, party: frame.party }, frame.message);
        this.safeEmit('error', { code: frame.code, message: frame.message });
        return;
      default:
        return; // vad, translation, interruption frames end here
    }
  };

  /** Ends open utterances (a leg hung up): what was heard so far is finalized. */
  endUtterances(): void {
    this.pipeline.vad.flush((p) => this.mediaMsOf(p));
  }
}
