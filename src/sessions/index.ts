// Public door of sessions/: live sessions, their registry, the pipeline pieces and the lifecycle.
export * from './contracts.js';
export * from './lifecycle.js';
export type { Frame, FrameKind } from './frames.js';
export { FrameProcessor, chain, type FrameSink } from './processors/processor.js';
export { VadProcessor } from './processors/vad.js';
export { SttProcessor } from './processors/stt.js';
export { BridgeProcessor, ORIGINAL_SPEAKER_LABEL } from './processors/bridge.js';
export { TranslateProcessor, type TranslationRoute } from './processors/translate.js';
export { TtsProcessor, TRANSLATED_SPEAKER_LABEL } from './processors/tts.js';
export { InterruptionProcessor } from './processors/interruption.js';
export { OutputPacer, MAX_QUEUED_FRAMES, MAX_LIVE_BACKLOG_FRAMES, IDLE_TICKS, pacerLiveTotals, type OutputPacerOptions } from './processors/pacer.js';
export { registerPacerMetrics } from './metrics.js';
export { MediaClock, sharedMediaClock, type TickListener, type TickSource } from './media-clock.js';
export { planPipeline, buildPipeline, vadParties, type PipelinePlan } from './pipeline.js';
export { SESSION_MODES, TRANSLATION_MODES, AGENT_MODES, isSessionMode, type SessionMode } from './modes.js';
export { LiveSession, type LiveSessionOptions, type LiveSessionHooks, type LiveAgentOptions, type SessionOutput, type StoredTurn } from './live-session.js';
export { SessionRegistry, awaitsPhoneLeg, type SessionRegistryDeps } from './registry.js';
export { SessionNotFoundError, SessionEndedError } from './errors.js';
export { SessionOwnedElsewhereError } from './ownership.js';
export { AgentSpeechStage, AgentPlayoutTracker, AgentSpeechLedger, AGENT_SPEAKER_LABEL, type SpokenReply } from './processors/agent-speech.js';
export { AgentBargeInProcessor, DEFAULT_BARGE_IN_MIN_SPEECH_MS } from './processors/barge-in.js';
export {
  AgentListener,
  HandoffBridge,
  isSettled,
  EARLY_MIN_WORDS,
  EARLY_STABLE_AUDIO_MS,
  type CustomerTurnSink,
  type RecognizerHypothesis,
} from './processors/agent-listener.js';
export { AGENT_VAD_HANGOVER_MS } from './pipeline.js';
