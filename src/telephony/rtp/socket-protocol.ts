// Messages between the main thread and an RTP socket worker (socket-worker.ts, socket-pool.ts).
// Packets travel in batches: one transferred buffer holding them back to back, with per-packet
// socket id, length, remote port and address alongside.

import type { TickPhase } from '../../media/index.js';

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
   * Batched sockets (MEDIA_IO=native): room in the current send batch for an RTP packet to port:address
   * whose `samples` PCM16 samples the addon encodes as G.711 (payload type 8: A-law, 0: µ-law) on its
   * way out, off the event loop. Before returning, the caller writes the 12-byte header at the returned
   * offset of `sendBuffer` and the samples into `sendPcm` from index (offset + 12) / 2. -1 when there is
   * none (another payload type, a closed socket, an address that is not an IPv4 literal): encode and send().
   */
  reservePcmSend?(samples: number, payloadType: number, port: number, address: string): number;
  /** Batched sockets: connect(2) to one peer, or with null to none again (NativeSocket.connectTo); false when refused. */
  connectTo?(peer: { address: string; port: number } | null): boolean;
  /**
   * Batched sockets on a clock with sub-ticks: read once per frame, in the sub-tick `phase` names (its
   * leg's playout, which moves with the arrivals), not in the frame's first.
   */
  readIn?(phase: TickPhase): void;
  /**
   * Batched sockets read at ticks: reads this socket now, outside its turn (a leg about to conceal a frame
   * that may have come since its socket was read). False when it cannot (a receive thread reads them).
   */
  readNow?(): boolean;
  readonly sendBuffer?: Uint8Array;
  readonly sendPcm?: Int16Array;
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
