// Messages between the main thread and an RTP socket worker (socket-worker.ts, socket-pool.ts).
// Packets travel in batches: one transferred buffer holding them back to back, with per-packet
// socket id, length, remote port and address alongside.

/** Where a packet came from, and when it arrived when that was before it was read (MEDIA_IO=native). */
export interface PacketInfo {
  address: string;
  port: number;
  /** performance.now() time of the kernel's arrival; absent: it arrived just now. */
  arrivedAt?: number;
}

/**
 * The subset of dgram.Socket an RTP endpoint uses, so a worker-owned or batched socket can stand in
 * for one. A message's buffer may be reused once the listener returns: copy what must outlive the call.
 */
export interface MediaSocket {
  on(event: 'message', listener: (msg: Buffer, rinfo: PacketInfo) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  send(msg: Uint8Array, port: number, address: string, callback?: (err: Error | null) => void): void;
  /**
   * Batched sockets (MEDIA_IO=native): room for a `len`-byte packet to port:address in the current send
   * batch, to be written in place, before the caller returns, at the returned offset of `sendBuffer`;
   * -1 when there is none (use send()). Saves a buffer and a copy per packet.
   */
  reserveSend?(len: number, port: number, address: string): number;
  readonly sendBuffer?: Uint8Array;
  address(): { port: number };
  close(): void;
}

export interface BindRequest {
  t: 'bind';
  id: number;
  address: string;
  port: number;
}

export interface CloseRequest {
  t: 'close';
  id: number;
}

/** One tick's outgoing packets for the sockets of one worker. */
export interface SendBatch {
  t: 'send';
  data: ArrayBuffer;
  ids: Int32Array;
  lens: Int32Array;
  ports: Int32Array;
  addrs: string[];
}

export type ToWorker = BindRequest | CloseRequest | SendBatch;

export interface BindReply {
  t: 'bound';
  id: number;
  /** 0 with `error` when the port could not be bound. */
  port: number;
  error?: string;
}

/** Packets read by the worker in one turn of its event loop. */
export interface RxBatch {
  t: 'rx';
  data: ArrayBuffer;
  ids: Int32Array;
  lens: Int32Array;
  ports: Int32Array;
  addrs: string[];
}

export type FromWorker = BindReply | RxBatch;
