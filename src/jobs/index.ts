// Public door of jobs/: the periodic work a worker node runs (sweepers, webhook delivery, recording
// encoding and retention, analyses).
export { startInactivitySweeper, type InactivitySweeper, type InactivitySweeperOptions } from './inactivity-sweeper.js';
export { startNodeLostSweeper, type NodeLostSweeper, type NodeLostSweeperOptions } from './node-lost-sweeper.js';
export type { Sweeper } from './periodic-sweep.js';
export { startWebhookDelivery, WebhookDeliveryWorker, type WebhookDeliveryOptions } from './webhook-delivery.js';
export { startWebhookRetention, type WebhookRetentionOptions } from './webhook-retention.js';
export { startRecordingEncoder, MAX_ENCODE_ATTEMPTS, type RecordingEncoder, type RecordingEncoderDeps } from './recording-encoder.js';
export { startRecordingRetention } from './recording-retention.js';
export { startAnalysisWorker, runAnalysis, MAX_ANALYSIS_ATTEMPTS } from './analysis-worker.js';
export { startSipCaptureRetention, type SipCaptureRetentionOptions } from './sip-capture-retention.js';
