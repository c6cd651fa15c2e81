// RTP sockets owned by worker threads (MEDIA_WORKERS=N > 0): the UDP system calls — the largest
// item of the gateway's profile (dgram's native send 44 % of busy time, two recvmsg per packet) — run
// on N worker threads, and the main thread exchanges one message per batch with each: all packets a
// worker read in one turn of its loop, and all packets the endpoints sent in one media-clock tick
// (flushed in a microtask after the tick, so every leg's send of the tick shares one message).
// The jitter buffer, G.711, RTCP and the session chain stay on the main thread.
import { EventEmitter } from 'node:events';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BindReply, FromWorker, MediaSocket, RxBatch, SendBatch } from './socket-protocol.js';

/** A socket living in a worker; looks like the part of dgram.Socket the endpoint uses. */
class WorkerSocket extends EventEmitter implements MediaSocket {
  private closed = false;

  constructor(
    private readonly owner: SocketWorker,
    readonly id: number,
    private readonly port: number,
  ) {
    super();
  }

  send(msg: Uint8Array, port: number, address: string, callback?: (err: Error | null) => void): void {
    if (this.closed) {
      callback?.(new Error('socket closed'));
      return;
    }
    this.owner.queueSend(this.id, msg, port, address, callback);
  }

  address(): { port: number } {
    return { port: this.port };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.owner.close(this.id);
    this.emit('close');
  }

  /** A packet the worker read for this socket. */
  deliver(msg: Buffer, address: string, port: number): void {
    if (!this.closed) this.emit('message', msg, { address, port });
  }
}

class SocketWorker {
  private readonly worker: Worker;
  private readonly sockets = new Map<number, WorkerSocket>();
  private readonly binds = new Map<number, (r: BindReply) => void>();
  private nextId = 1;
  private dead: Error | null = null;
  // The tick's outgoing packets, flushed in one message (see queueSend).
  private out: Uint8Array[] = [];
  private outIds: number[] = [];
  private outPorts: number[] = [];
  private outAddrs: string[] = [];
  private outCallbacks: ((err: Error | null) => void)[] = [];
  private outBytes = 0;
  private outQueued = false;
  /** Messages each way (a health figure for the bench: batches, not packets). */
  readonly counts = { rxBatches: 0, rxPackets: 0, txBatches: 0, txPackets: 0 };

  constructor() {
    // Under tsx (development, tests, benches) this file is .ts: the worker registers tsx's loader first.
    const ext = extname(fileURLToPath(import.meta.url));
    const entry = new URL(`./socket-worker${ext}`, import.meta.url);
    this.worker =
      ext === '.ts'
        ? new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true })
        : new Worker(entry);
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => (m.t === 'rx' ? this.receive(m) : this.binds.get(m.id)?.(m)));
    const fail = (err: Error): void => {
      this.dead ??= err;
      for (const [id, resolve] of this.binds) resolve({ t: 'bound', id, port: 0, error: err.message });
      this.binds.clear();
      // An 'error' without a listener would throw here (a socket between bind and its endpoint): skip it.
      for (const s of this.sockets.values()) if (s.listenerCount('error') > 0) s.emit('error', err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`RTP socket worker exited (code ${code})`)));
  }

  /** Why the worker is gone, or null (a method: a field read would stay narrowed across the await in bind). */
  private failure(): Error | null {
    return this.dead;
  }

  get socketCount(): number {
    return this.sockets.size;
  }

  /** Binds `port` in the worker; null when it is taken (the allocator tries another). */
  async bind(address: string, port: number): Promise<WorkerSocket | null> {
    if (this.dead) throw this.dead;
    const id = this.nextId++;
    const reply = await new Promise<BindReply>((resolve) => {
      this.binds.set(id, resolve);
      this.worker.postMessage({ t: 'bind', id, address, port });
    });
    this.binds.delete(id);
    if (reply.error) {
      // The worker may have died while we waited (the reply then carries its exit).
      const dead = this.failure();
      if (dead) throw dead;
      return null;
    }
    const s = new WorkerSocket(this, id, reply.port);
    this.sockets.set(id, s);
    return s;
  }

  queueSend(id: number, msg: Uint8Array, port: number, address: string, callback?: (err: Error | null) => void): void {
    this.out.push(msg);
    this.outIds.push(id);
    this.outPorts.push(port);
    this.outAddrs.push(address);
    if (callback) this.outCallbacks.push(callback);
    this.outBytes += msg.length;
    if (!this.outQueued) {
      this.outQueued = true;
      // The media clock runs every endpoint's send in one callback: a microtask runs after it.
      queueMicrotask(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.outQueued = false;
    const n = this.outIds.length;
    if (n === 0) return;
    const data = new Uint8Array(this.outBytes);
    const lens = new Int32Array(n);
    let off = 0;
    let i = 0;
    for (const b of this.out) {
      data.set(b, off);
      lens[i++] = b.length;
      off += b.length;
    }
    const ids = Int32Array.from(this.outIds);
    const ports = Int32Array.from(this.outPorts);
    const msg: SendBatch = { t: 'send', data: data.buffer, ids, lens, ports, addrs: this.outAddrs };
    const callbacks = this.outCallbacks;
    this.out = [];
    this.outIds = [];
    this.outPorts = [];
    this.outAddrs = [];
    this.outCallbacks = [];
    this.outBytes = 0;
    this.counts.txBatches++;
    this.counts.txPackets += n;
    if (this.dead) {
      for (const cb of callbacks) cb(this.dead);
      return;
    }
    this.worker.postMessage(msg, [data.buffer, lens.buffer, ids.buffer, ports.buffer]);
    // Handed to the worker, which sends before it handles a later close of the same socket.
    for (const cb of callbacks) cb(null);
  };

  close(id: number): void {
    this.sockets.delete(id);
    // Packets queued this tick leave first: the close message is posted after the flush.
    if (this.outQueued) this.flush();
    if (!this.dead) this.worker.postMessage({ t: 'close', id });
  }

  private receive(m: RxBatch): void {
    this.counts.rxBatches++;
    this.counts.rxPackets += m.ids.length;
    let off = 0;
    for (let i = 0; i < m.ids.length; i++) {
      const len = m.lens[i] ?? 0;
      this.sockets.get(m.ids[i] ?? -1)?.deliver(Buffer.from(m.data, off, len), m.addrs[i] ?? '', m.ports[i] ?? 0);
      off += len;
    }
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** N socket workers; each new socket goes to the one holding the fewest. */
export class RtpSocketPool {
  private readonly workers: SocketWorker[];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`RTP socket pool size must be a positive integer, got ${size}`);
    this.workers = Array.from({ length: size }, () => new SocketWorker());
  }

  /** Binds `port` on the least loaded worker; null when the port is taken. */
  bind(address: string, port: number): Promise<MediaSocket | null> {
    let best: SocketWorker | undefined;
    for (const w of this.workers) if (!best || w.socketCount < best.socketCount) best = w;
    if (!best) throw new Error('RTP socket pool has no workers');
    return best.bind(address, port);
  }

  /** Batches and packets each way, summed over the workers. */
  get counts(): { rxBatches: number; rxPackets: number; txBatches: number; txPackets: number } {
    const c = { rxBatches: 0, rxPackets: 0, txBatches: 0, txPackets: 0 };
    for (const w of this.workers) {
      c.rxBatches += w.counts.rxBatches;
      c.rxPackets += w.counts.rxPackets;
      c.txBatches += w.counts.txBatches;
      c.txPackets += w.counts.txPackets;
    }
    return c;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

let shared: RtpSocketPool | null = null;

/** The process's pool of `size` socket workers, started on first use (one pool per process). */
export function sharedRtpSocketPool(size: number): RtpSocketPool {
  if (shared && shared.size !== size) throw new Error(`RTP socket pool already running with ${shared.size} workers, asked for ${size}`);
  shared ??= new RtpSocketPool(size);
  return shared;
}

/** The shared pool if one was started (for counters), else null. */
export function runningRtpSocketPool(): RtpSocketPool | null {
  return shared;
}
