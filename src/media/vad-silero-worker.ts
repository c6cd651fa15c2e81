// The worker thread that runs the one shared Silero VAD model of a process (onnxruntime-node).
// onnxruntime-node's session.run() is native work on the calling thread (wrapped in a setImmediate),
// so on the main thread every batch would stall the media path: here it runs beside it.
//
// The source is plain JavaScript run with `new Worker(source, { eval: true })`: the same text works
// under tsc's dist, tsx and vitest (a .ts worker file would need a loader in the worker).
//
// Protocol (messages are processed in order, so a `drop` after a `run` comes after its results):
//   main → worker  { type: 'run', seq, ids: Int32Array, gens: Int32Array, samples: Float32Array }
//                    one 256-sample window (8 kHz, -1..1) per entry; a stream may appear more than once
//                    (its windows in order); a new `gen` for a stream starts it from a zeroed state
//                  { type: 'drop', id }   forget a closed stream's state
//   worker → main  { type: 'ready' } once the model is loaded; { type: 'failed', message } (load or run
//                  error: the worker stops answering); { type: 'result', seq, probs: Float32Array }
//                  (speech probability per entry of run `seq`, same order)
// The model (Silero v5/v6 ONNX graph) takes `input` [batch, 32 + 256] (the last 32 samples of the
// stream's previous window, then the window), `state` [2, batch, 128] and `sr` (int64 8000), and
// returns `output` [batch, 1] and `stateN`: as silero-vad's OnnxWrapper does at 8 kHz.

export interface WorkerRun {
  type: 'run';
  seq: number;
  ids: Int32Array;
  gens: Int32Array;
  samples: Float32Array;
}
export interface WorkerDrop {
  type: 'drop';
  id: number;
}
export type ToWorker = WorkerRun | WorkerDrop;
export type FromWorker = { type: 'ready' } | { type: 'failed'; message: string } | { type: 'result'; seq: number; probs: Float32Array };

export interface WorkerData {
  /** Resolved path of onnxruntime-node (the eval'd worker has no module of its own to resolve from). */
  ortPath: string;
  model: string;
}

/** 8 kHz samples per model window (32 ms), and the previous window's tail the model sees before it. */
export const SILERO_WINDOW = 256;
export const SILERO_CONTEXT = 32;
export const SILERO_SAMPLE_RATE = 8000;

export const SILERO_WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const WINDOW = ${SILERO_WINDOW}, CONTEXT = ${SILERO_CONTEXT}, ROW = WINDOW + CONTEXT, HIDDEN = 128;
const streams = new Map(); // id -> { gen, state: Float32Array(2 * HIDDEN), context: Float32Array(CONTEXT) }
const queue = [];
let session = null;
let busy = false;
let dead = false;
const sr = new ort.Tensor('int64', BigInt64Array.from([${SILERO_SAMPLE_RATE}n]), []);

function fail(err) {
  if (dead) return;
  dead = true;
  parentPort.postMessage({ type: 'failed', message: String((err && err.message) || err) });
}

function streamFor(id, gen) {
  let s = streams.get(id);
  if (!s || s.gen !== gen) {
    s = { gen, state: new Float32Array(2 * HIDDEN), context: new Float32Array(CONTEXT) };
    streams.set(id, s);
  }
  return s;
}

async function runBatch(m) {
  const n = m.ids.length;
  const probs = new Float32Array(n);
  // A stream's windows depend on each other through its state: one round per window of a stream.
  const rounds = [];
  const seen = new Map();
  for (let i = 0; i < n; i++) {
    const r = seen.get(m.ids[i]) || 0;
    seen.set(m.ids[i], r + 1);
    (rounds[r] = rounds[r] || []).push(i);
  }
  for (const entries of rounds) {
    const b = entries.length;
    const input = new Float32Array(b * ROW);
    const state = new Float32Array(2 * b * HIDDEN);
    const owners = [];
    for (let j = 0; j < b; j++) {
      const i = entries[j];
      const s = streamFor(m.ids[i], m.gens[i]);
      owners.push(s);
      input.set(s.context, j * ROW);
      input.set(m.samples.subarray(i * WINDOW, (i + 1) * WINDOW), j * ROW + CONTEXT);
      state.set(s.state.subarray(0, HIDDEN), j * HIDDEN);
      state.set(s.state.subarray(HIDDEN), (b + j) * HIDDEN);
    }
    const out = await session.run({
      input: new ort.Tensor('float32', input, [b, ROW]),
      state: new ort.Tensor('float32', state, [2, b, HIDDEN]),
      sr,
    });
    const p = out.output.data;
    const next = out.stateN.data;
    for (let j = 0; j < b; j++) {
      const s = owners[j];
      probs[entries[j]] = p[j];
      s.state.set(next.subarray(j * HIDDEN, (j + 1) * HIDDEN), 0);
      s.state.set(next.subarray((b + j) * HIDDEN, (b + j + 1) * HIDDEN), HIDDEN);
      s.context.set(input.subarray((j + 1) * ROW - CONTEXT, (j + 1) * ROW));
    }
  }
  parentPort.postMessage({ type: 'result', seq: m.seq, probs }, [probs.buffer]);
}

async function drain() {
  if (busy || !session || dead) return;
  busy = true;
  try {
    while (queue.length && !dead) {
      const m = queue.shift();
      if (m.type === 'drop') streams.delete(m.id);
      else await runBatch(m);
    }
  } catch (err) {
    fail(err);
  } finally {
    busy = false;
  }
}

parentPort.on('message', (m) => {
  queue.push(m);
  void drain();
});

ort.InferenceSession.create(workerData.model, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
}).then(
  (s) => {
    session = s;
    parentPort.postMessage({ type: 'ready' });
    void drain();
  },
  fail,
);
`;
