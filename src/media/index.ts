// Public door of media/: pure, allocation-aware audio building blocks for the session pipeline.
export { SAMPLE_RATE, FRAME_MS, FRAME_SAMPLES } from './constants.js';
export {
  mulawDecode,
  mulawEncode,
  alawDecode,
  alawEncode,
  mulawDecodeInto,
  mulawEncodeInto,
  alawDecodeInto,
  alawEncodeInto,
  MULAW_SILENCE,
  ALAW_SILENCE,
  g711EncodeTables,
} from './g711.js';
export { Framer, toFrames, type FrameSink } from './framer.js';
export { VoiceActivityDetector, frameLevelDb, type VadOptions, type VadEvents, type VadTransition } from './vad.js';
export { SileroVoiceActivityDetector, type SileroVadOptions, type SileroVadEvents } from './vad-silero.js';
export { SileroModel, SILERO_BATCH_MS } from './vad-silero-model.js';
export { mixFrames, applyGain } from './mixer.js';
export { Resampler, resample, type ResamplerOptions } from './resampler.js';
export {
  MediaClock,
  FollowingPhase,
  processMediaClock,
  DEFAULT_MEDIA_SUBTICKS,
  type TickListener,
  type TickPhase,
  type TickSource,
  type TickErrorHook,
} from './media-clock.js';
export { PlayoutPhase, playoutMoves } from './playout-phase.js';
export {
  OverloadGuard,
  startNodeOverloadGuard,
  overloadLimits,
  type OverloadGuardOptions,
  type ClockRunCounts,
  type MediaOverloadView,
} from './overload-guard.js';
export { registerMediaOverloadMetrics } from './overload-metrics.js';
export { WavFileWriter, parseWav, encodeWav, type ParsedWav } from './wav.js';
// The jitter buffer is written by the telephony helper; this door re-exports it.
export * from './jitter-buffer.js';
export { LiveQueue, frameEnergy, emptyLiveQueueStats, SILENT_FRAME_ENERGY, type LiveQueueOptions, type LiveQueueStats } from './live-queue.js';
export { observeStage, registerMediaStageMetrics, mediaStageSummary, resetMediaStages, type MediaStage } from './stage-timing.js';
