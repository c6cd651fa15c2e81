// What a session's pipeline does, decided once when it opens, from its mode, its languages and the
// engines this node has. Languages (SPEC "Session object"): `source_language` is Party A, the agent;
// `target_language` is Party B, the customer. A null language means "auto-detect": it resolves to
// engines.stt.defaultLanguage for planning, and when the STT engine detects language (openai) the
// party's stream is opened in detect mode; the first final that names a language replaces the
// default and the routes are planned again (replanWithDetected). Engines that cannot detect keep
// the default (documented in the README).
import type { EngineCapabilities, Engines, VoiceSettings } from '../speech/index.js';
import type { VadChoice } from './processors/vad.js';
import { otherParty, PARTIES, type Party } from './contracts.js';
import type { TickSource } from './media-clock.js';
import { chain, type FrameProcessor, type FrameSink } from './processors/processor.js';
import { BridgeProcessor } from './processors/bridge.js';
import { VadProcessor } from './processors/vad.js';
import type { SessionMode } from './modes.js';
import { SttProcessor } from './processors/stt.js';
import { TranslateProcessor, type TranslationRoute } from './processors/translate.js';
import { TtsProcessor } from './processors/tts.js';
import { InterruptionProcessor } from './processors/interruption.js';
import { OutputPacer, type OutputPacerOptions } from './processors/pacer.js';
import { AgentPlayoutTracker, AgentSpeechLedger, AgentSpeechStage } from './processors/agent-speech.js';
import { AgentBargeInProcessor } from './processors/barge-in.js';
import { AgentListener, HandoffBridge, type CustomerTurnSink } from './processors/agent-listener.js';

/**
 * End-of-turn in the agent modes: 300 ms of silence ends the customer's utterance (the translation
 * modes wait 560 ms so interpreters' pauses do not split sentences); the agent answers sooner.
 */
export const AGENT_VAD_HANGOVER_MS = 300;

export interface PipelinePlan {
  mode: SessionMode;
  languages: Record<Party, string>;
  /** True where the language was null and fell back to the default. */
  defaulted: Record<Party, boolean>;
  /** True where the language is null and the STT engine will detect it (until it has). */
  detect: Record<Party, boolean>;
  transcribe: Record<Party, boolean>;
  routes: Partial<Record<Party, TranslationRoute>>;
  /** Assistive mode: whose original audio is bridged to whom. */
  bridge: { from: Party; to: Party } | null;
  /** What the engines cannot serve for this session, one sentence each (sent as `engine_unavailable`). */
  unavailable: string[];
}

export interface PlanInput {
  mode: SessionMode;
  source_language: string | null;
  target_language: string | null;
}

export function planPipeline(s: PlanInput, engines: EngineCapabilities, defaultLanguage: string): PipelinePlan {
  const languages: Record<Party, string> = {
    agent: s.source_language ?? defaultLanguage,
    customer: s.target_language ?? defaultLanguage,
  };
  const defaulted = { agent: s.source_language === null, customer: s.target_language === null };
  const detects = engines.detectsLanguage?.() ?? false;
  const detect = { agent: defaulted.agent && detects, customer: defaulted.customer && detects };
  const transcribe = { agent: engines.canTranscribe(languages.agent), customer: engines.canTranscribe(languages.customer) };
  const routes: Partial<Record<Party, TranslationRoute>> = {};
  const unavailable: string[] = [];
  let bridge: PipelinePlan['bridge'] = null;

  // Which party's speech is translated, and who hears the translation spoken.
  const wanted: Array<{ from: Party; speakTo: Party | null }> = [];
  if (s.mode === 'bidirectional_translation') {
    for (const p of PARTIES) wanted.push({ from: p, speakTo: otherParty(p) });
  } else if (s.mode === 'assistive_translation') {
    wanted.push({ from: 'agent', speakTo: 'customer' }, { from: 'customer', speakTo: null });
    bridge = { from: 'customer', to: 'agent' };
  }
  // ai_agent and help_chat_voice: the customer's speech goes to the agent runtime (agent stages in buildPipeline).

  for (const p of PARTIES) {
    if (!transcribe[p]) unavailable.push(`${p} speech (${languages[p]}) will not be transcribed: no speech-to-text engine for '${languages[p]}'`);
  }
  for (const { from, speakTo } of wanted) {
    const to = languages[otherParty(from)];
    if (to === languages[from] || !transcribe[from]) continue; // same language: nothing to translate
    if (!engines.canTranslate(languages[from], to)) {
      unavailable.push(`${from} speech (${languages[from]}) will not be translated: no translation engine for '${languages[from]}' to '${to}'`);
      continue;
    }
    let listener = speakTo;
    if (listener && !engines.canSpeak(to)) {
      unavailable.push(`translated ${from} speech will not be spoken to the ${listener}: no speech synthesis for '${to}'`);
      listener = null;
    }
    routes[from] = { to, speakTo: listener };
  }
  return { mode: s.mode, languages, defaulted, detect, transcribe, routes, bridge, unavailable };
}

/** The plan once `party`'s language was detected: routes are planned from it, that party stops detecting. */
export function replanWithDetected(plan: PipelinePlan, party: Party, language: string, engines: EngineCapabilities, defaultLanguage: string): PipelinePlan {
  const known = (p: Party): string | null => (p === party ? language : plan.detect[p] || plan.defaulted[p] ? null : plan.languages[p]);
  const next = planPipeline({ mode: plan.mode, source_language: known('agent'), target_language: known('customer') }, engines, defaultLanguage);
  next.defaulted = { ...plan.defaulted, [party]: false };
  next.detect = { ...plan.detect, [party]: false };
  return next;
}

export interface PipelineOptions {
  plan: PipelinePlan;
  engines: Engines;
  voice: VoiceSettings;
  clock: TickSource;
  vad?: VadChoice;
  /** Drop queued output for a party who starts speaking (off for interpreters: they finish the sentence). */
  bargeIn?: boolean;
  /** The output pacer's live margin bounds. */
  pacer?: OutputPacerOptions;
  /** Agent modes with an agent: its stages are added (see buildAgentStages). */
  agent?: AgentPipelineOptions;
  /** Language resolution for parties whose language is null (see replanWithDetected). */
  defaultLanguage?: string;
  /** Called after a detected language replanned the session (plan already updated in place). */
  onLanguageDetected?: (party: Party, language: string) => void;
}

export interface AgentPipelineOptions {
  /** The customer's turns: finals, and settled hypotheses answered early (see AgentListener). */
  turns: CustomerTurnSink;
  /** Language the agent speaks. */
  language: string;
  timelineMs: () => number;
  bargeInMinSpeechMs?: number;
  onBargeIn?: () => void;
  /** Answer the recognizer's settled hypothesis before the final (AgentListener); default false. */
  earlyPartial?: boolean;
}

/** The agent stages of a pipeline, for the live session to drive. */
export interface AgentStages {
  speech: AgentSpeechStage;
  ledger: AgentSpeechLedger;
  handoff: HandoffBridge;
}

export interface Pipeline {
  /** Entry of the chain. */
  input: FrameProcessor;
  /** The VAD (in the chain only when a stage reads its marks; see vadParties). */
  vad: VadProcessor;
  pacer: OutputPacer;
  stages: FrameProcessor[];
  agent: AgentStages | null;
}

/**
 * The parties whose voice activity a translation-mode pipeline uses: vad_start / vad_end are read by
 * the STT stage (only for a party it transcribes: an engine serves the party's language) and by
 * barge-in (every party). Language detection and translation start from the STT's finals, so they
 * need no more; the session's sink ignores the marks. The agent modes always detect (barge-in).
 */
export function vadParties(plan: PipelinePlan, engines: Pick<Engines, 'stt'>, bargeIn: boolean): Party[] {
  if (bargeIn) return [...PARTIES];
  if (!engines.stt) return [];
  return PARTIES.filter((p) => plan.transcribe[p]);
}

/**
 * Builds the chain: [bridge] → [VAD] → STT → translate → TTS → [barge-in] → pacer → sink; in the
 * agent modes: handoff bridge → VAD → agent barge-in → STT → agent listener → agent speech → pacer
 * → playout tracker → sink.
 */
export function buildPipeline(opts: PipelineOptions, sink: FrameSink): Pipeline {
  const { plan, engines } = opts;
  if (opts.agent) return buildAgentPipeline(opts, opts.agent, sink);
  const stages: FrameProcessor[] = [];
  if (plan.bridge) stages.push(new BridgeProcessor(plan.bridge.from, plan.bridge.to));
  // No VAD for a party whose marks nobody reads (no STT for its language, no barge-in): Silero costs
  // ~3-6 ms CPU per call-second. `vad` stays callable (flush) with no detectors when none is needed.
  const vad = new VadProcessor(opts.vad, vadParties(plan, engines, opts.bargeIn ?? false));
  if (vad.parties.length > 0) stages.push(vad);
  let translate: TranslateProcessor | null = null;
  const onDetected = (party: Party, language: string): void => {
    // Replanned before the final that carried the language goes on, so that final is translated.
    Object.assign(plan, replanWithDetected(plan, party, language, engines, opts.defaultLanguage ?? plan.languages[party]));
    translate?.setRoutes(plan.routes);
    opts.onLanguageDetected?.(party, language);
  };
  stages.push(
    new SttProcessor({
      engine: engines.stt,
      languages: { ...plan.languages },
      enabled: plan.transcribe,
      detect: { ...plan.detect },
      onLanguageDetected: onDetected,
    }),
  );
  if (Object.keys(plan.routes).length > 0 || plan.detect.agent || plan.detect.customer) {
    translate = new TranslateProcessor(engines.translator, plan.routes);
    stages.push(translate);
    stages.push(new TtsProcessor(engines.tts, opts.voice));
  }
  if (opts.bargeIn) stages.push(new InterruptionProcessor());
  const pacer = new OutputPacer(opts.clock, opts.pacer);
  stages.push(pacer);
  return { input: chain(stages, sink), vad, pacer, stages, agent: null };
}

function buildAgentPipeline(opts: PipelineOptions, agent: AgentPipelineOptions, sink: FrameSink): Pipeline {
  const { plan, engines } = opts;
  const ledger = new AgentSpeechLedger();
  const handoff = new HandoffBridge();
  const vad = new VadProcessor({ ...opts.vad, hangoverMs: Math.min(opts.vad?.hangoverMs ?? AGENT_VAD_HANGOVER_MS, AGENT_VAD_HANGOVER_MS) });
  const speech = new AgentSpeechStage(ledger, { tts: engines.tts, voice: opts.voice, language: agent.language, timelineMs: agent.timelineMs });
  const pacer = new OutputPacer(opts.clock, opts.pacer);
  const stages: FrameProcessor[] = [
    handoff,
    vad,
    new AgentBargeInProcessor({
      agentSpeaking: () => ledger.speaking && !handoff.bridged,
      minSpeechMs: agent.bargeInMinSpeechMs,
      onInterrupt: agent.onBargeIn,
    }),
    new SttProcessor({ engine: engines.stt, languages: plan.languages, enabled: plan.transcribe }),
    new AgentListener(agent.turns, agent.earlyPartial ?? false),
    speech,
    pacer,
    new AgentPlayoutTracker(ledger, speech),
  ];
  return { input: chain(stages, sink), vad, pacer, stages, agent: { speech, ledger, handoff } };
}
