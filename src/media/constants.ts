// Pipeline audio format (DESIGN.md "Media"): PCM16 mono 8 kHz in 20 ms frames.
// Mirrors src/sessions/contracts.ts; media/ stays free of imports from sessions/.
export const SAMPLE_RATE = 8000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = 160;
