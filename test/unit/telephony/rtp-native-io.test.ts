// The batched RTP socket layer (MEDIA_IO=native) on real sockets, its tick driven by the test: what a
// drain reads, which socket a packet belongs to, the kernel arrival time, and a socket closed while
// packets are being handed out. (Every RtpEndpoint case also runs on it: rtp-endpoint.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import dgram from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import {
  COLD_READ_TICKS,
  loadRtpIoAddon,
  NativeRtpIo,
  RTP_RECV_THREAD_NAME,
  RTP_SEND_THREAD_NAME,
  type NativeSocket,
  type RtpIoAddon,
} from '../../../src/telephony/rtp/native-io.js';
import { monotonicToPerformance } from '../../../src/telephony/rtp/rtp-io-addon.js';
import type { MediaSocket, PacketInfo } from '../../../src/telephony/rtp/socket-protocol.js';
import type { TickListener, TickSource } from '../../../src/media/index.js';
import { alawEncode, mulawEncode } from '../../../src/media/g711.js';
import { holdLoop, sendTo, untilKernelStampsArrivals } from '../../helpers/kernel-stamps.js';

/** A clock the test ticks by hand; it records which phase the reader subscribed to. */
class HandClock implements TickSource {
  early: TickListener | null = null;
  /** Unset: taken as always ticking (sends leave in a microtask); false: sends wait for the end of the loop turn. */
  ticking?: boolean;
  subscribe(): () => void {
    throw new Error('the reader must subscribe to the early phase');
  }
  subscribeEarly(fn: TickListener): () => void {
    this.early = fn;
    return () => {
      this.early = null;
    };
  }
  tick(): void {
    this.early?.(0);
  }
}

const addon = loadRtpIoAddon();
const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((c) => c()));

function open(io: NativeRtpIo): MediaSocket {
  const s = io.bind('127.0.0.1', 0);
  if (!s) throw new Error('no port');
  closers.push(() => s.close());
  return s;
}

async function sender(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  closers.push(() => s.close());
  return s;
}

function collect(s: MediaSocket): { data: number[][]; info: PacketInfo[] } {
  const got = { data: [] as number[][], info: [] as PacketInfo[] };
  s.on('message', (msg, info) => {
    got.data.push([...msg]);
    got.info.push(info);
  });
  return got;
}

// Every case runs through io_uring (one submission per tick for the reads, one for the sends) and
// through the plain system calls (recvmmsg per socket, sendto per packet: MEDIA_IO_URING=false, or an
// addon built without liburing), the sends from the addon's send thread and, with
// MEDIA_IO_SEND_THREAD=false, from the caller's.
describe.each([
  { ioUring: true, sendThread: true },
  { ioUring: false, sendThread: true },
  { ioUring: true, sendThread: false },
  { ioUring: false, sendThread: false },
])('NativeRtpIo (io_uring: $ioUring, send thread: $sendThread)', ({ ioUring, sendThread }) => {
  /** Two sockets of one reader ticked by hand, what each received, and a sender. */
  async function twoSockets() {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const a = open(io);
    const b = open(io);
    return { clock, io, a, b, gotA: collect(a), gotB: collect(b), tx: await sender() };
  }

  it('reads every socket once per tick and hands each packet to its own socket, in order, with the sender', async () => {
    const { clock, a, b, gotA, gotB, tx } = await twoSockets();
    await sendTo(tx, [1, 2, 3], a);
    await sendTo(tx, [4], b);
    await sendTo(tx, [5, 6], a);
    expect(gotA.data).toEqual([]); // nothing is read between ticks
    clock.tick();
    expect(gotA.data).toEqual([
      [1, 2, 3],
      [5, 6],
    ]);
    expect(gotB.data).toEqual([[4]]);
    expect(gotA.info[0]).toMatchObject({ address: '127.0.0.1', port: tx.address().port });
    clock.tick();
    expect(gotA.data).toHaveLength(2);
  });

  it('does not read a socket nobody listens to: its packets wait in the kernel until a listener comes', async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const quiet = open(io);
    const tx = await sender();
    await sendTo(tx, [1], quiet);
    clock.tick();
    clock.tick();
    expect(io.counts.packets).toBe(0);
    const got = collect(quiet);
    clock.tick();
    expect(got.data).toEqual([[1]]);
    expect(io.counts.packets).toBe(1);
  });

  it('reads one socket outside its turn (readNow), leaving the others for the tick', async () => {
    const { clock, io, a, b, gotA, gotB, tx } = await twoSockets();
    await sendTo(tx, [1], a);
    await sendTo(tx, [2], b);
    expect(a.readNow?.()).toBe(true);
    expect(gotA.data).toEqual([[1]]);
    expect(gotB.data).toEqual([]);
    clock.tick();
    expect(gotA.data).toEqual([[1]]);
    expect(gotB.data).toEqual([[2]]);
    expect(io.counts.readsNow).toBe(1);
    a.close();
    expect(a.readNow?.()).toBe(false);
  });

  it("dates a packet by the kernel's arrival, not by the tick that read it", async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const rx = open(io);
    const got = collect(rx);
    const tx = await sender();
    await untilKernelStampsArrivals(tx, rx, got, () => clock.tick());
    const before = performance.now();
    await sendTo(tx, [9], rx);
    const sent = performance.now();
    // The loop is held 60 ms before the tick reads the socket.
    holdLoop(60);
    const readAt = performance.now();
    clock.tick();
    expect(got.data.at(-1)).toEqual([9]);
    const arrivedAt = got.info.at(-1)?.arrivedAt ?? Number.NaN;
    // Clock domains differ by rounding only: allow 2 ms either side of the send.
    expect(arrivedAt).toBeGreaterThanOrEqual(before - 2);
    expect(arrivedAt).toBeLessThanOrEqual(sent + 2);
    expect(readAt - arrivedAt).toBeGreaterThanOrEqual(55);
  });

  it(`reads a cold socket (RTCP's) every ${COLD_READ_TICKS} ticks, its packets dated by their arrival`, async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const hot = open(io);
    const cold = io.bind('127.0.0.1', 0, { cold: true })!;
    closers.push(() => cold.close());
    const gotHot = collect(hot);
    const gotCold = collect(cold);
    const tx = await sender();
    await untilKernelStampsArrivals(tx, hot, gotHot, () => clock.tick());
    // In phase: the next tick is the first of a cold read period.
    while (gotCold.data.length === 0) {
      await sendTo(tx, [0], cold);
      clock.tick();
    }
    const sent = performance.now();
    await sendTo(tx, [7], cold);
    await sendTo(tx, [8], hot);
    holdLoop(30);
    const ticksToRead: number[] = [];
    for (let t = 1; t <= COLD_READ_TICKS; t++) {
      clock.tick();
      if (gotHot.data.at(-1)?.[0] === 8 && ticksToRead.length === 0) ticksToRead.push(t);
      if (gotCold.data.at(-1)?.[0] === 7) ticksToRead.push(t);
      if (ticksToRead.length === 2) break;
    }
    expect(ticksToRead).toEqual([1, COLD_READ_TICKS]);
    const arrivedAt = gotCold.info.at(-1)?.arrivedAt ?? Number.NaN;
    expect(performance.now() - arrivedAt).toBeGreaterThanOrEqual(25);
    expect(arrivedAt).toBeGreaterThanOrEqual(sent - 2);
  });

  it('reads a tick of more packets than one batch holds in several calls, losing none', async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const sockets = Array.from({ length: 40 }, () => open(io));
    const counts = sockets.map(() => 0);
    sockets.forEach((s, i) => s.on('message', () => counts[i]!++));
    // 40 sockets × 60 packets = 2,400, more than the 2,048 one drain call holds; the socket buffers hold 60 each.
    // Sent from the sockets themselves (each to itself): queued, then out in batches once this task yields.
    for (let round = 0; round < 60; round++) {
      for (const s of sockets) s.send(Buffer.from([round]), s.address().port, '127.0.0.1');
    }
    await Promise.resolve();
    await until(() => addon.sendsQueued() === 0); // the send thread's batches have left
    clock.tick();
    expect(counts).toEqual(sockets.map(() => 60));
    expect(io.counts.packets).toBe(2400);
    expect(io.counts.reads).toBeGreaterThanOrEqual(2);
  });

  it('sends batch after batch in order, none lost, when more are queued than the send thread holds at once', async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const sockets = Array.from({ length: 200 }, () => open(io));
    const got = sockets.map(() => [] as number[]);
    // Only this case's one-byte packets: 200 ephemeral ports may include one another test file's RTP is still sent to.
    sockets.forEach((s, i) => s.on('message', (msg) => msg.length === 1 && got[i]!.push(msg[0] ?? -1)));
    // 12,000 packets in one task: six full batches handed over back to back (the thread holds four).
    for (let round = 0; round < 60; round++) {
      for (const s of sockets) s.send(Buffer.from([round]), s.address().port, '127.0.0.1');
    }
    await Promise.resolve();
    await until(() => addon.sendsQueued() === 0);
    clock.tick();
    const inOrder = Array.from({ length: 60 }, (_, round) => round);
    expect(got).toEqual(sockets.map(() => inOrder));
    expect(io.counts.sendErrors).toBe(0);
  });

  it('drops the rest of a tick for a socket closed while its packets are handed out, and keeps the others', async () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const a = io.bind('127.0.0.1', 0);
    if (!a) throw new Error('no port');
    const b = open(io);
    let aCount = 0;
    let aReleased = false;
    a.on('close', () => (aReleased = true));
    const gotB = collect(b);
    a.on('message', () => {
      aCount++;
      a.close(); // e.g. a DTMF digit that hangs the call up
    });
    const tx = await sender();
    await sendTo(tx, [1], a);
    await sendTo(tx, [2], a);
    await sendTo(tx, [3], b);
    clock.tick();
    expect(aCount).toBe(1);
    expect(gotB.data).toEqual([[3]]);
    expect(io.socketCount).toBe(1);
    // The closed socket's port is free again (once the send thread holds nothing that might be its last packet).
    await until(() => aReleased);
    const again = io.bind('127.0.0.1', a.address().port);
    expect(again).not.toBeNull();
    again?.close();
  });

  it('answers null for a port in use (the allocator tries the next) and refuses an IPv6 address', async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const taken = await sender();
    expect(io.bind('127.0.0.1', taken.address().port)).toBeNull();
    expect(() => io.bind('::1', 0)).toThrow(/IPv4/);
  });

  it("sends a tick's packets together after the tick, each from its own socket, in order", async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const a = open(io);
    const b = open(io);
    const rx = await sender();
    const got: [number, number][] = [];
    rx.on('message', (msg, rinfo) => got.push([msg[0] ?? -1, rinfo.port]));
    const sent: (Error | null)[] = [];
    a.send(Buffer.from([1]), rx.address().port, '127.0.0.1', (err) => sent.push(err));
    b.send(Buffer.from([2]), rx.address().port, '127.0.0.1');
    a.send(Buffer.from([3]), rx.address().port, '127.0.0.1');
    expect(io.counts.sent).toBe(0); // queued until the current task yields
    await Promise.resolve();
    expect(io.counts.sent).toBe(3);
    expect(sent).toEqual([null]);
    await until(() => got.length === 3);
    expect(got).toEqual([
      [1, a.address().port],
      [2, b.address().port],
      [3, a.address().port],
    ]);
  });

  it('sends a packet written in place as header and PCM, G.711-encoded by the addon, in order with copied ones', async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const a = open(io);
    const rx = await sender();
    const got: number[][] = [];
    rx.on('message', (msg) => got.push([...msg]));
    const header = [0x80, 8, 0, 1, 0, 0, 0, 160, 1, 2, 3, 4];
    const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1000]);
    a.send(Buffer.from([1]), rx.address().port, '127.0.0.1');
    const at = a.reservePcmSend?.(pcm.length, 8, rx.address().port, '127.0.0.1') ?? -1;
    expect(at).toBeGreaterThanOrEqual(0);
    a.sendBuffer?.set(header, at);
    a.sendPcm?.set(pcm, (at + 12) / 2);
    a.send(Buffer.from([3]), rx.address().port, '127.0.0.1');
    await until(() => got.length === 3);
    expect(got).toEqual([[1], [...header, ...alawEncode(pcm)], [3]]);
    expect(io.counts.sent).toBe(3);
    expect(io.counts.sendErrors).toBe(0);
  });

  it('reserves no PCM slot it cannot send: another payload type, a name, over a slot, a closed socket', () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const a = open(io);
    expect(a.reservePcmSend?.(160, 9, 5000, '127.0.0.1')).toBe(-1); // G.722: encoded in JavaScript, sent as bytes
    expect(a.reservePcmSend?.(160, 0, 5000, 'example.invalid')).toBe(-1);
    expect(a.reservePcmSend?.(1024, 0, 5000, '127.0.0.1')).toBe(-1); // 12 + 2048 bytes: over a slot
    a.close();
    expect(a.reservePcmSend?.(160, 0, 5000, '127.0.0.1')).toBe(-1);
    expect(io.counts.sent).toBe(0);
  });

  it.each([
    { name: 'A-law', payloadType: 8, encode: alawEncode },
    { name: 'µ-law', payloadType: 0, encode: mulawEncode },
  ])('encodes every one of the 65,536 sample values as the JavaScript $name encoder does', async ({ payloadType, encode }) => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const a = open(io);
    const rx = await sender();
    const got: Buffer[] = [];
    rx.on('message', (msg: Buffer) => got.push(msg));
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const perPacket = 160;
    const perRound = 32; // packets in flight at once: well inside the receiver's socket buffer
    for (let from = 0; from < all.length; from += perPacket * perRound) {
      const expected = got.length + Math.min(perRound, Math.ceil((all.length - from) / perPacket));
      for (let off = from; off < Math.min(all.length, from + perPacket * perRound); off += perPacket) {
        const samples = all.subarray(off, off + perPacket);
        const at = a.reservePcmSend?.(samples.length, payloadType, rx.address().port, '127.0.0.1') ?? -1;
        a.sendBuffer?.set([0x80, payloadType, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], at);
        a.sendPcm?.set(samples, (at + 12) / 2);
      }
      await until(() => got.length === expected);
    }
    const payloads = Buffer.concat(got.map((m) => m.subarray(12)));
    expect(payloads.length).toBe(all.length);
    expect(payloads.equals(Buffer.from(encode(all)))).toBe(true);
  });

  it('sends what a loop turn queued outside a tick in one batch, at the end of the turn', async () => {
    const clock = new HandClock();
    clock.ticking = false;
    let batches = 0;
    const countedSendBatch = (...args: Parameters<RtpIoAddon['sendBatch']>): number => {
      batches++;
      return addon.sendBatch(...args);
    };
    const counting = Object.create(addon, { sendBatch: { value: countedSendBatch } }) as RtpIoAddon;
    const io = new NativeRtpIo(counting, clock, undefined, ioUring, sendThread);
    const sockets = [open(io), open(io), open(io)];
    const rx = await sender();
    const got: number[] = [];
    rx.on('message', (msg) => got.push(msg[0] ?? -1));
    // Three SIP requests of one loop turn, each hanging a call up: an RTCP BYE, then the socket closed.
    sockets.forEach((s, i) => queueMicrotask(() => s.send(Buffer.from([i]), rx.address().port, '127.0.0.1')));
    await Promise.resolve();
    await Promise.resolve();
    expect(io.counts.sent).toBe(0); // the turn is not over: no batch yet
    await new Promise((r) => setImmediate(r));
    expect(io.counts.sent).toBe(3);
    expect(batches).toBe(1);
    await until(() => got.length === 3);
    expect(got).toEqual([0, 1, 2]);
  });

  it("sends a tick's packets before the next tick reads when ticks run back to back (a clock catching up)", () => {
    const clock = new HandClock();
    const io = new NativeRtpIo(addon, clock, undefined, ioUring, sendThread);
    const a = open(io);
    a.send(Buffer.from([1]), 9, '127.0.0.1');
    expect(io.counts.sent).toBe(0);
    clock.tick(); // the next tick, in the same task: no microtask ran in between
    expect(io.counts.sent).toBe(1);
  });

  it('lets the packets queued on a socket leave before it closes, and refuses sends after', async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const s = io.bind('127.0.0.1', 0);
    if (!s) throw new Error('no port');
    const rx = await sender();
    const got: number[] = [];
    rx.on('message', (msg) => got.push(msg[0] ?? -1));
    s.send(Buffer.from([5]), rx.address().port, '127.0.0.1');
    s.close(); // an RTCP BYE, then the close: the BYE must not be lost or sent from a reused fd
    await until(() => got.length === 1);
    expect(got).toEqual([5]);
    const err = await new Promise<Error | null>((resolve) => s.send(Buffer.from([6]), rx.address().port, '127.0.0.1', resolve));
    expect(err?.message).toMatch(/closed/);
  });

  it('closes the sockets of one loop turn together, after their queued packets left, and only then frees their ports', async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const keep = open(io);
    const sockets = Array.from({ length: 20 }, () => {
      const s = io.bind('127.0.0.1', 0);
      if (!s) throw new Error('no port');
      return s;
    });
    const rx = await sender();
    const got: number[] = [];
    rx.on('message', (msg) => got.push(msg[0] ?? -1));
    const released: number[] = [];
    sockets.forEach((s, i) => {
      s.on('close', () => released.push(i));
      s.send(Buffer.from([i]), rx.address().port, '127.0.0.1'); // each one's RTCP BYE
      s.close();
    });
    expect(io.socketCount).toBe(1);
    expect(released).toEqual([]); // still open: the BYEs have not left
    await until(() => got.length === sockets.length && released.length === sockets.length);
    expect(got).toEqual(sockets.map((_, i) => i));
    expect(released).toEqual(sockets.map((_, i) => i));
    for (const s of sockets) {
      const again = io.bind('127.0.0.1', s.address().port);
      expect(again).not.toBeNull();
      again?.close();
    }
    expect(io.socketCount).toBe(1);
    keep.close();
  });

  it('reports an unusable destination to the send callback', async () => {
    const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, sendThread);
    const s = open(io);
    const err = await new Promise<Error | null>((resolve) => s.send(Buffer.from([1]), 5000, 'example.invalid', resolve));
    expect(err?.message).toMatch(/IPv4 literals/);
    expect(io.counts.sendErrors).toBe(1);
  });
});

describe("the addon's receive thread (MEDIA_IO_RECV_THREAD)", () => {
  const threadNames = (): string[] => readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());

  /** A reader whose sockets the receive thread reads; the test ticks it by hand. */
  function reader(): { clock: HandClock; io: NativeRtpIo } {
    const clock = new HandClock();
    return { clock, io: new NativeRtpIo(addon, clock, undefined, true, true, true) };
  }

  it('hands each packet to its own socket at the tick, in order, with the sender and its kernel arrival time', async () => {
    const { clock, io } = reader();
    const sockets = Array.from({ length: 8 }, () => open(io));
    const got = sockets.map(collect);
    const tx = await sender();
    await untilKernelStampsArrivals(tx, sockets[0]!, got[0]!, () => clock.tick());
    got[0]!.data.length = got[0]!.info.length = 0;
    const before = io.counts.packets;
    for (let round = 0; round < 3; round++) for (const [i, s] of sockets.entries()) await sendTo(tx, [i, round], s);
    const sentAt = performance.now();
    await until(() => io.receivedPending === 24);
    expect(got.every((g) => g.data.length === 0)).toBe(true); // read by the thread, held for the tick
    clock.tick();
    expect(io.receivedPending).toBe(0);
    got.forEach((g, i) => {
      expect(g.data).toEqual([0, 1, 2].map((round) => [i, round]));
      for (const info of g.info) {
        expect(info).toMatchObject({ address: '127.0.0.1', port: tx.address().port });
        expect(info.arrivedAt).toBeLessThanOrEqual(sentAt + 1); // the kernel's time, before the tick read it
      }
    });
    expect(io.counts.packets - before).toBe(24);
  });

  it('leaves reads outside the tick to the thread (readNow refuses)', () => {
    const { io } = reader();
    expect(open(io).readNow?.()).toBe(false);
    expect(io.counts.readsNow).toBe(0);
  });

  it("drops a closed socket's packets not yet taken: a socket opened on its number gets none of them", async () => {
    const { clock, io } = reader();
    const a = io.bind('127.0.0.1', 0)!;
    const b = open(io);
    const gotB = collect(b);
    const tx = await sender();
    for (const n of [1, 2, 3]) await sendTo(tx, [n], a);
    await sendTo(tx, [9], b);
    await until(() => io.receivedPending === 4);
    const fd = a.fd;
    a.close();
    await new Promise((r) => setImmediate(r)); // the close flush: unwatched, then closed
    expect(io.receivedPending).toBe(1);
    // New sockets take the lowest free numbers: one of the first few opened now takes the closed one's.
    const reopened: NativeSocket[] = [];
    while (reopened.length < 64 && reopened.at(-1)?.fd !== fd) reopened.push(io.bind('127.0.0.1', 0)!);
    closers.push(() => reopened.forEach((s) => s.close()));
    expect(reopened.at(-1)?.fd).toBe(fd);
    const gotReopened = reopened.map(collect);
    clock.tick();
    expect(gotB.data).toEqual([[9]]);
    expect(gotReopened.flatMap((g) => g.data)).toEqual([]);
  });

  it('hands over a tick of more packets than one take holds, losing none', async () => {
    const { clock, io } = reader();
    const sockets = Array.from({ length: 20 }, () => open(io));
    const counts = sockets.map(() => 0);
    sockets.forEach((s, i) => s.on('message', () => counts[i]!++));
    const tx = await sender();
    for (let k = 0; k < 110; k++) for (const s of sockets) await sendTo(tx, [k & 255], s);
    await until(() => io.receivedPending === 2200);
    clock.tick();
    expect(counts).toEqual(sockets.map(() => 110));
    expect(io.counts.reads).toBe(2); // 2,048 and then the rest
  });

  it('runs as ${RTP_RECV_THREAD_NAME} while the reader has sockets, and stops with the last of them', async () => {
    const { io } = reader();
    const before = threadNames().filter((n) => n === RTP_RECV_THREAD_NAME).length;
    const a = io.bind('127.0.0.1', 0)!;
    expect(threadNames().filter((n) => n === RTP_RECV_THREAD_NAME).length).toBe(before + 1);
    a.close();
    expect(threadNames().filter((n) => n === RTP_RECV_THREAD_NAME).length).toBe(before);
  });
});

describe("the addon's send batch", () => {
  it(`runs its send thread under the name ${RTP_SEND_THREAD_NAME}, so top -H tells its CPU from the event loop's`, async () => {
    const rx = await sender();
    let received = 0;
    rx.on('message', () => received++);
    const fd = addon.open(0x7f000001, 0);
    closers.push(() => addon.close(fd));
    // An asynchronous batch starts the thread if no earlier case did.
    expect(addon.sendBatch(new Uint8Array(2048), Int32Array.from([fd, 12, rx.address().port, 0x7f000001]), 1, false, true)).toBeGreaterThanOrEqual(0);
    await until(() => received === 1);
    const names = readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
    expect(names).toContain(RTP_SEND_THREAD_NAME);
  });

  it.each([true, false])(
    'holds packets queued after sendNotBefore until that time, and keeps their order with those sent at once after them (io_uring: %s)',
    async (ioUring) => {
      const rx = await sender();
      const arrivals: { byte: number; at: number }[] = [];
      rx.on('message', (msg) => arrivals.push({ byte: msg[12] ?? -1, at: performance.now() }));
      const io = new NativeRtpIo(addon, new HandClock(), undefined, ioUring, true);
      const tx = open(io);
      const packet = (byte: number): Buffer => Buffer.concat([Buffer.alloc(12), Buffer.from([byte])]);
      const heldUntil = performance.now() + 150;
      io.sendNotBefore(heldUntil);
      tx.send(packet(1), rx.address().port, '127.0.0.1');
      io.sendNotBefore(0); // flushes the held packet's batch; this one goes behind it
      tx.send(packet(2), rx.address().port, '127.0.0.1');
      await until(() => arrivals.length === 2);
      expect(arrivals.map((a) => a.byte)).toEqual([1, 2]);
      // The kernel had the packet only once the thread sent it, so it cannot have been seen earlier
      // (to within the microseconds of the two clocks' measured offset).
      expect(arrivals[0]!.at).toBeGreaterThanOrEqual(heldUntil - 1);
    },
  );

  it('queues sixteen held batches without making the caller wait, and sends them all in order', async () => {
    const rx = await sender();
    const got: number[] = [];
    rx.on('message', (msg) => got.push(msg[12] ?? -1));
    const fd = addon.open(0x7f000001, 0);
    closers.push(() => addon.close(fd));
    await until(() => addon.sendsQueued() === 0); // the queue's room is all this case's
    const waitsBefore = addon.sendWaits();
    const heldUntil = performance.now() + 100;
    const data = new Uint8Array(2048);
    for (let k = 0; k < 16; k++) {
      data[12] = k;
      const notBefore = heldUntil + k; // on performance.now()'s clock; the addon takes CLOCK_MONOTONIC's
      expect(
        addon.sendBatch(data, Int32Array.from([fd, 13, rx.address().port, 0x7f000001]), 1, false, true, notBefore - monotonicToPerformance),
      ).toBeGreaterThanOrEqual(0);
    }
    expect(addon.sendWaits()).toBe(waitsBefore);
    await until(() => got.length === 16);
    expect(got).toEqual(Array.from({ length: 16 }, (_, k) => k));
  });

  it('refuses a batch whose length word asks for an unknown encoding or an odd PCM payload, sending nothing', async () => {
    const rx = await sender();
    let received = 0;
    rx.on('message', () => received++);
    const fd = addon.open(0x7f000001, 0);
    expect(fd).toBeGreaterThanOrEqual(0);
    closers.push(() => addon.close(fd));
    const data = new Uint8Array(2048);
    const port = rx.address().port;
    const batch = (lengthWord: number): number => addon.sendBatch(data, Int32Array.from([fd, lengthWord, port, 0x7f000001]), 1, false, false);
    expect(batch(172 | (3 << 16))).toBe(-22); // no such encoding
    expect(batch(13 | (1 << 16))).toBe(-22); // half a sample
    expect(batch(8 | (2 << 16))).toBe(-22); // shorter than the RTP header
    expect(batch(12 + 320)).toBe(0); // plain bytes still go
    await until(() => received === 1);
  });
});

/** Resolves once `done` holds (the datagrams cross loopback through the event loop). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(done()).toBe(true);
}
