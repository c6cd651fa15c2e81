// What a session's pipeline does, decided once when it opens, from its mode, its languages and the
// engines this node has. Languages (SPEC "Session object"): `source_language` is Party A, the agent;
// `target_language` is Party B, the customer. A null language means "auto-detect": none of the
// engines here detects language, so it resolves to engines.stt.defaultLanguage (documented in the
// README); an engine that can detect would take over here.
import type { Engines, VoiceSettings } from '../speech/index.js';
import type { VadOptions } from '../media/index.js';
import { otherParty, PARTIES, type Party } from './contracts.js';
import type { TickSource } from './media-clock.js';
import { chain, type FrameProcessor, type FrameSink } from './processors/processor.js';
import { BridgeProcessor } from './processors/bridge.js';
import { VadProcessor } from './processors/vad.js';
import { SttProcessor } from './processors/stt.js';
import { TranslateProcessor, type TranslationRoute } from './processors/translate.js';
import { TtsProcessor } from './processors/tts.js';
import { InterruptionProcessor } from './processors/interruption.js';
import { OutputPacer } from './processors/pacer.js';

export type SessionMode = 'bidirectional_translation' | 'assistive_translation' | 'ai_agent' | 'help_chat_voice';

export interface PipelinePlan {
  mode: string;
  languages: Record<Party, string>;
  /** True where the language was null and fell back to the default. */
  defaulted: Record<Party, boolean>;
  transcribe: Record<Party, boolean>;
  routes: Partial<Record<Party, TranslationRoute>>;
  /** Assistive mode: whose original audio is bridged to whom. */
  bridge: { from: Party; to: Party } | null;
  /** What the engines cannot serve for this session, one sentence each (sent as `engine_unavailable`). */
  unavailable: string[];
}

export interface PlanInput {
  mode: string;
  source_language: string | null;
  target_language: string | null;
}

/** What planning asks of the engines: capabilities only, so the API can plan without running engines. */
export type EngineCapabilities = Pick<Engines, 'canTranscribe' | 'canTranslate' | 'canSpeak'>;

export function planPipeline(s: PlanInput, engines: EngineCapabilities, defaultLanguage: string): PipelinePlan {
  const languages: Record<Party, string> = {
    agent: s.source_language ?? defaultLanguage,
    customer: s.target_language ?? defaultLanguage,
  };
  const defaulted = { agent: s.source_language === null, customer: s.target_language === null };
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
  // ai_agent and help_chat_voice: transcribe and store only until the AI agent runtime lands (issue for src/agents/).

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
  return { mode: s.mode, languages, defaulted, transcribe, routes, bridge, unavailable };
}

export interface PipelineOptions {
  plan: PipelinePlan;
  engines: Engines;
  voice: VoiceSettings;
  clock: TickSource;
  vad?: VadOptions;
  /** Drop queued output for a party who starts speaking (off for interpreters: they finish the sentence). */
  bargeIn?: boolean;
}

export interface Pipeline {
  /** Entry of the chain. */
  input: FrameProcessor;
  vad: VadProcessor;
  pacer: OutputPacer;
  stages: FrameProcessor[];
}

/** Builds the chain: [bridge] → VAD → STT → translate → TTS → [barge-in] → pacer → sink. */
export function buildPipeline(opts: PipelineOptions, sink: FrameSink): Pipeline {
  const { plan, engines } = opts;
  const stages: FrameProcessor[] = [];
  if (plan.bridge) stages.push(new BridgeProcessor(plan.bridge.from, plan.bridge.to));
  const vad = new VadProcessor(opts.vad);
  stages.push(vad);
  stages.push(new SttProcessor({ engine: engines.stt, languages: plan.languages, enabled: plan.transcribe }));
  if (Object.keys(plan.routes).length > 0) {
    stages.push(new TranslateProcessor(engines.translator, plan.routes));
    stages.push(new TtsProcessor(engines.tts, opts.voice));
  }
  if (opts.bargeIn) stages.push(new InterruptionProcessor());
  const pacer = new OutputPacer(opts.clock);
  stages.push(pacer);
  return { input: chain(stages, sink), vad, pacer, stages };
}
