// One Silero VAD model per process (per model file), shared by every stream: the model is loaded
// once in a worker thread (vad-silero-worker.ts) and each stream keeps only its recurrent state
// there (~1 KB). Windows from all streams are gathered for up to `batchMs` and sent as one batch:
// one inference call costs ~150 µs for one window and ~23 µs per window in a batch of 32 or more
// (BENCHMARKS.md), so a node with 100 party streams makes ~50 calls a second, not 3,000.
// Nothing here blocks the event loop: starting the worker is asynchronous, and windows sent
// before the model is loaded wait in the worker.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SILERO_WINDOW, SILERO_WORKER_SOURCE, type FromWorker, type ToWorker, type WorkerData } from './vad-silero-worker.js';

export interface SileroStreamSink {
  /** Speech probability of the stream's next window of generation `gen`, in submission order. */
  onProbability(prob: number, gen: number): void;
  /** The model could not be loaded or run: the stream will get no more probabilities. */
  onFailed(err: Error): void;
}

/** Windows are held this long at most to batch them with other streams' (default). */
export const SILERO_BATCH_MS = 20;

interface Batch {
  seq: number;
  ids: number[];
  gens: number[];
}

export class SileroModel extends EventEmitter<{ sent: [windows: number] }> {
  private static readonly models = new Map<string, SileroModel>();
  private static loads = 0;

  /** The process's model for this file, started on first use. */
  static shared(modelPath: string): SileroModel {
    let m = SileroModel.models.get(modelPath);
    if (!m) {
      m = new SileroModel(modelPath);
      SileroModel.models.set(modelPath, m);
    }
    return m;
  }

  /** How many models (workers) this process has started: one per model file. */
  static loadCount(): number {
    return SileroModel.loads;
  }

  /** Inference calls and windows answered so far (batching figures). */
  readonly stats = { runs: 0, windows: 0 };
  batchMs = SILERO_BATCH_MS;
  private worker: Worker | null = null;
  private failure: Error | null = null;
  private readonly streams = new Map<number, SileroStreamSink>();
  private nextId = 1;
  private seq = 0;
  private pendingIds: number[] = [];
  private pendingGens: number[] = [];
  private pendingSamples = new Float32Array(SILERO_WINDOW * 64);
  private inFlight: Batch | null = null;
  private timer: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];

  private constructor(private readonly modelPath: string) {
    super();
  }

  /** Registers a stream; its probabilities go to `sink` until close(id). */
  open(sink: SileroStreamSink): number {
    const id = this.nextId++;
    this.streams.set(id, sink);
    const failure = this.failure;
    if (failure) setImmediate(() => this.streams.get(id)?.onFailed(failure));
    else this.start();
    return id;
  }

  /**
   * Starts loading the model now (a media node at startup), so the first session's first windows
   * do not wait for the load (0.8 s quiet, seconds under load). Idempotent; never blocks.
   */
  preload(): void {
    if (!this.failure) this.start();
  }

  /** Queues one window (SILERO_WINDOW samples, -1..1) of stream `id`; copied, so `window` may be reused. */
  submit(id: number, gen: number, window: Float32Array): void {
    if (this.failure || !this.streams.has(id)) return;
    const n = this.pendingIds.length;
    if ((n + 1) * SILERO_WINDOW > this.pendingSamples.length) {
      const grown = new Float32Array(this.pendingSamples.length * 2);
      grown.set(this.pendingSamples);
      this.pendingSamples = grown;
    }
    this.pendingSamples.set(window.subarray(0, SILERO_WINDOW), n * SILERO_WINDOW);
    this.pendingIds.push(id);
    this.pendingGens.push(gen);
    this.worker?.ref(); // keep the process up until the answer is in
    if (!this.inFlight && !this.timer) this.timer = setTimeout(() => this.flush(), this.batchMs);
  }

  /**
   * Forgets a stream: its queued windows are discarded, and answers already being computed are
   * dropped when they arrive (the sink is never called again).
   */
  close(id: number): void {
    if (!this.streams.delete(id)) return;
    if (this.pendingIds.includes(id)) {
      const ids: number[] = [];
      const gens: number[] = [];
      const samples = new Float32Array(this.pendingSamples.length);
      this.pendingIds.forEach((other, i) => {
        if (other === id) return;
        samples.set(this.pendingSamples.subarray(i * SILERO_WINDOW, (i + 1) * SILERO_WINDOW), ids.length * SILERO_WINDOW);
        ids.push(other);
        gens.push(this.pendingGens[i] ?? 0);
      });
      this.pendingIds = ids;
      this.pendingGens = gens;
      this.pendingSamples = samples;
    }
    this.post({ type: 'drop', id });
    this.settleIfIdle();
  }

  /** Resolves once every window submitted so far has been answered (or dropped, or the model failed). */
  settled(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private idle(): boolean {
    return this.failure !== null || (this.pendingIds.length === 0 && this.inFlight === null);
  }

  private start(): void {
    if (this.worker) return;
    const data: WorkerData = { ortPath: createRequire(import.meta.url).resolve('onnxruntime-node'), model: this.modelPath };
    const worker = new Worker(SILERO_WORKER_SOURCE, { eval: true, workerData: data });
    SileroModel.loads++;
    worker.unref(); // an idle model does not keep a process (a CLI, a test run) alive
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`Silero VAD worker exited (code ${code})`)));
    this.worker = worker;
  }

  private post(m: ToWorker, transfer?: ArrayBuffer[]): void {
    if (this.worker && !this.failure) this.worker.postMessage(m, transfer);
  }

  private flush(): void {
    this.timer = null;
    if (this.inFlight || this.pendingIds.length === 0 || this.failure) return;
    const n = this.pendingIds.length;
    const samples = this.pendingSamples.slice(0, n * SILERO_WINDOW);
    const batch: Batch = { seq: ++this.seq, ids: this.pendingIds, gens: this.pendingGens };
    const run: ToWorker = { type: 'run', seq: batch.seq, ids: Int32Array.from(this.pendingIds), gens: Int32Array.from(this.pendingGens), samples };
    this.pendingIds = [];
    this.pendingGens = [];
    this.inFlight = batch;
    this.post(run, [samples.buffer]);
    this.emit('sent', n);
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'failed') {
      this.fail(new Error(`Silero VAD model ${this.modelPath}: ${m.message}`));
      return;
    }
    if (m.type !== 'result') return; // 'ready': windows sent before it were queued in the worker
    const batch = this.inFlight;
    if (!batch || batch.seq !== m.seq) return;
    this.inFlight = null;
    this.stats.runs++;
    this.stats.windows += batch.ids.length;
    // A closed stream's answers are dropped here; a reset one's (older gen) by its sink.
    batch.ids.forEach((id, i) => this.streams.get(id)?.onProbability(m.probs[i] ?? 0, batch.gens[i] ?? 0));
    if (this.pendingIds.length > 0) this.flush(); // they waited for this run: no extra hold
    this.settleIfIdle();
  }

  private settleIfIdle(): void {
    if (!this.idle()) return;
    if (this.pendingIds.length === 0 && this.inFlight === null) this.worker?.unref();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pendingIds = [];
    this.pendingGens = [];
    this.inFlight = null;
    const worker = this.worker;
    this.worker = null;
    void worker?.terminate();
    for (const sink of [...this.streams.values()]) sink.onFailed(err);
    this.settleIfIdle();
  }
}
