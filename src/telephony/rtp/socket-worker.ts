// Worker thread that owns RTP sockets for the main thread (MEDIA_WORKERS, see socket-pool.ts): the
// per-packet system calls (one sendmsg out, two recvmsg in, the receive buffer allocation) run on this
// thread, and the main thread sees one message per batch each way instead of one callback per packet.
//
// Messages (main → worker): bind, close, send (a tick's packets for every socket of this worker, in
// one transferred buffer). Worker → main: bound (port or error), rx (every packet read in one turn
// of this worker's event loop, in one transferred buffer).
import dgram from 'node:dgram';
import { parentPort } from 'node:worker_threads';
import { literalLookup } from './literal-lookup.js';
import type { ToWorker, RxBatch } from './socket-protocol.js';

const port = parentPort;
if (!port) throw new Error('socket-worker.ts runs as a worker thread only');

const sockets = new Map<number, dgram.Socket>();

// Received packets wait here for the end of this event-loop turn (setImmediate runs after the poll
// phase that read them), then leave as one message.
let rxChunks: Buffer[] = [];
let rxIds: number[] = [];
let rxPorts: number[] = [];
let rxAddrs: string[] = [];
let rxBytes = 0;
let rxQueued = false;

function flushRx(): void {
  rxQueued = false;
  const n = rxIds.length;
  if (n === 0) return;
  const data = new Uint8Array(rxBytes);
  const lens = new Int32Array(n);
  let off = 0;
  let i = 0;
  for (const c of rxChunks) {
    data.set(c, off);
    lens[i++] = c.length;
    off += c.length;
  }
  const ids = Int32Array.from(rxIds);
  const ports = Int32Array.from(rxPorts);
  const msg: RxBatch = { t: 'rx', data: data.buffer, ids, lens, ports, addrs: rxAddrs };
  port!.postMessage(msg, [data.buffer, lens.buffer, ids.buffer, ports.buffer]);
  rxChunks = [];
  rxIds = [];
  rxPorts = [];
  rxAddrs = [];
  rxBytes = 0;
}

function bind(id: number, address: string, wanted: number): void {
  const s = dgram.createSocket({ type: 'udp4', lookup: literalLookup() });
  s.once('error', (err) => {
    s.close();
    port!.postMessage({ t: 'bound', id, port: 0, error: err.message });
  });
  s.bind({ port: wanted, address, exclusive: true }, () => {
    s.removeAllListeners('error');
    // ICMP unreachable and the like: RTP is best effort, the endpoint's timeout notices a dead peer.
    s.on('error', () => {});
    s.on('message', (msg, rinfo) => {
      rxChunks.push(msg);
      rxIds.push(id);
      rxPorts.push(rinfo.port);
      rxAddrs.push(rinfo.address);
      rxBytes += msg.length;
      if (!rxQueued) {
        rxQueued = true;
        setImmediate(flushRx);
      }
    });
    sockets.set(id, s);
    port!.postMessage({ t: 'bound', id, port: s.address().port });
  });
}

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'bind':
      bind(m.id, m.address, m.port);
      return;
    case 'close': {
      const s = sockets.get(m.id);
      sockets.delete(m.id);
      try {
        s?.close();
      } catch {
        // already closed
      }
      return;
    }
    case 'send': {
      const data = new Uint8Array(m.data);
      let off = 0;
      for (let i = 0; i < m.ids.length; i++) {
        const len = m.lens[i] ?? 0;
        const s = sockets.get(m.ids[i] ?? -1);
        // A socket closed since the batch left: its packets are dropped, as dgram would after close().
        if (s) s.send(data.subarray(off, off + len), m.ports[i] ?? 0, m.addrs[i] ?? '');
        off += len;
      }
      return;
    }
  }
});
