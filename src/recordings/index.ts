// Public door of recordings/: the call recorder (taps → WAV), storage and the MP3 encoder.
export { CallRecorder, attachRecorder, recordingPermitted, RECORDING_MODES, type RecordingChannel, type RecorderDeps } from './recorder.js';
export { TimelineTrack, WINDOW_SAMPLES } from './timeline-track.js';
export { DirectoryStorage, createRecordingStorage, recordingsDir, type RecordingStorage } from './storage.js';
export { S3Storage, type S3StorageOptions } from './s3-storage.js';
export { encodeMp3, repairWavHeader, wavInfo, type WavInfo } from './encoder.js';
