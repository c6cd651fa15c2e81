import { describe, it, expect, afterEach, beforeEach } from 'vitest';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { RtpEndpoint, type RtpEndpointOptions } from '../../../src/telephony/rtp/endpoint.js';
import { useIoUringForRtp, useRecvThreadForRtp, useSendThreadForRtp } from '../../../src/telephony/rtp/native-io.js';
import { MediaClock, type TickListener, type TickSource } from '../../../src/media/index.js';
import { parseRtp, serializeRtp } from '../../../src/telephony/rtp/packet.js';
import { digitPackets } from '../../../src/telephony/rtp/dtmf.js';
import { mulawDecode, mulawEncode } from '../../../src/media/g711.js';
import { defined } from '../../helpers/defined.js';

const opened: RtpEndpoint[] = [];
/**
 * How the endpoints under test do their socket I/O: every case runs on dgram, on one socket worker
 * thread (MEDIA_WORKERS=1) and batched once per tick through the native addon (MEDIA_IO=native), with
 * io_uring and without (MEDIA_IO_URING=false), sending from the addon's thread and, with
 * MEDIA_IO_SEND_THREAD=false, from the main thread, and reading at the tick or, with
 * MEDIA_IO_RECV_THREAD=true, on the addon's receive thread.
 */
type SocketIo = 'dgram' | 'worker' | 'native' | 'native-no-uring' | 'native-sync-send' | 'native-recv-thread';
let socketIo: SocketIo = 'dgram';
const sockets: dgram.Socket[] = [];
afterEach(() => {
  opened.splice(0).forEach((e) => e.close());
  sockets.splice(0).forEach((s) => s.close());
});

/** An endpoint doing its socket I/O as `socketIo` says; `o` as in RtpEndpointOptions. */
async function endpoint(o: Partial<Pick<RtpEndpointOptions, 'timeoutMs' | 'connectSettled' | 'latching'>> = {}): Promise<RtpEndpoint> {
  const e = await RtpEndpoint.open({
    ...o,
    bindAddress: '127.0.0.1',
    portMin: 40000,
    portMax: 44999,
    timeoutMs: o.timeoutMs ?? 5000,
    clock: new MediaClock(),
    jitter: { targetFrames: 2, adaptive: false },
    socketWorkers: socketIo === 'worker' ? 1 : 0,
    nativeIo: socketIo.startsWith('native'),
  });
  opened.push(e);
  return e;
}

async function peer(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

function until<T>(fn: () => T | undefined, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      const v = fn();
      if (v !== undefined) {
        clearInterval(t);
        resolve(v);
      } else if (Date.now() - start > ms) {
        clearInterval(t);
        reject(new Error('timed out'));
      }
    }, 5);
  });
}

/** An endpoint whose SDP names `caller`, an `intruder` that knows its port, and what the endpoint plays and latches to. */
async function hijackScene(connectSettled: boolean) {
  const ep = await endpoint({ connectSettled });
  const caller = await peer();
  const intruder = await peer();
  ep.configure({ address: '127.0.0.1', port: caller.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
  const frames: Int16Array[] = [];
  ep.onFrames((f) => frames.push(f));
  const latched: number[] = [];
  ep.on('latched', (s) => latched.push(s.port));
  return { ep, caller, intruder, frames, latched };
}

/** The endpoints opened from now on do their socket I/O as `io` says. */
function useSocketIo(io: SocketIo): void {
  socketIo = io;
  useIoUringForRtp(io !== 'native-no-uring');
  useSendThreadForRtp(io !== 'native-sync-send');
  useRecvThreadForRtp(io === 'native-recv-thread');
}

describe.each<SocketIo>(['dgram', 'worker', 'native', 'native-no-uring', 'native-sync-send', 'native-recv-thread'])('RtpEndpoint (socket I/O: %s)', (io) => {
  beforeEach(() => useSocketIo(io));

  it('binds an even port in range and sends paced PCMU with increasing seq/timestamp', async () => {
    const ep = await endpoint();
    expect(ep.port % 2).toBe(0);
    expect(ep.port).toBeGreaterThanOrEqual(40000);
    const far = await peer();
    const got: ReturnType<typeof parseRtp>[] = [];
    far.on('message', (m) => got.push(parseRtp(m)));
    ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: false });
    ep.playFrame(new Int16Array(160).fill(1000));
    await until(() => (got.length >= 5 ? true : undefined));
    expect(got[0]!.marker).toBe(true);
    expect(got[1]!.marker).toBe(false);
    expect(got[0]!.payloadType).toBe(0);
    expect(got[0]!.payload.length).toBe(160);
    expect((got[1]!.sequence - got[0]!.sequence) & 0xffff).toBe(1);
    expect((got[1]!.timestamp - got[0]!.timestamp) >>> 0).toBe(160);
    expect(new Set(got.map((p) => p!.ssrc)).size).toBe(1);
    expect(got[0]!.payload[0]).toBe(mulawEncode(new Int16Array([1000]))[0]);
  });

  it('decodes incoming audio into 20 ms frames, latches to the first source and ignores others', async () => {
    const ep = await endpoint();
    const a = await peer();
    const b = await peer();
    ep.configure({ address: '127.0.0.1', port: a.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    const frames: Int16Array[] = [];
    ep.onFrames((f) => frames.push(f));
    const pcm = new Int16Array(160).fill(2000);
    const payload = mulawEncode(pcm);
    for (let i = 0; i < 6; i++) {
      a.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: i, timestamp: i * 160, ssrc: 1, payload }), ep.port, '127.0.0.1');
      b.send(serializeRtp({ marker: false, payloadType: 0, sequence: 100 + i, timestamp: 99999 + i * 160, ssrc: 2, payload }), ep.port, '127.0.0.1');
    }
    await until(() => (frames.length >= 4 ? true : undefined));
    const first = defined(frames[0], 'first frame');
    expect(first.length).toBe(160);
    expect(Math.abs(defined(first[0], 'first sample') - 2000)).toBeLessThan(100);
    expect(ep.stats.ignoredSource).toBe(6);
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: a.address().port });
  });

  it('keeps the caller when a third party sends first to the port (no media hijack), counting the strays', async () => {
    const { ep, caller, intruder, frames, latched } = await hijackScene(false);
    const intruderAudio = mulawEncode(new Int16Array(160).fill(-8000));
    for (let i = 0; i < 3; i++)
      intruder.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: i, timestamp: i * 160, ssrc: 66, payload: intruderAudio }), ep.port, '127.0.0.1');
    await until(() => (latched.length >= 1 ? true : undefined));
    const callerAudio = mulawEncode(new Int16Array(160).fill(3000));
    for (let i = 0; i < 8; i++) {
      caller.send(
        serializeRtp({ marker: i === 0, payloadType: 0, sequence: 500 + i, timestamp: 8000 + i * 160, ssrc: 7, payload: callerAudio }),
        ep.port,
        '127.0.0.1',
      );
      intruder.send(
        serializeRtp({ marker: false, payloadType: 0, sequence: 3 + i, timestamp: (3 + i) * 160, ssrc: 66, payload: intruderAudio }),
        ep.port,
        '127.0.0.1',
      );
    }
    await until(() => (frames.some((f) => Math.abs((f[0] ?? 0) - 3000) < 150) ? true : undefined));
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: caller.address().port });
    expect(latched.at(-1)).toBe(caller.address().port);
    await until(() => (ep.stats.ignoredSource >= 8 ? true : undefined));
    expect(ep.stats.ignoredSource).toBe(8); // every intruder packet after the caller showed up
  });

  it('sends to the new address once a re-INVITE moves the stream, and no longer to the old one', async () => {
    const ep = await endpoint();
    const first = await peer();
    const second = await peer();
    const at = { first: 0, second: 0 };
    first.on('message', () => at.first++);
    second.on('message', () => at.second++);
    ep.configure({ address: '127.0.0.1', port: first.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: false });
    await until(() => (at.first >= 3 ? true : undefined));
    const beforeMove = at.first;
    ep.configure({ address: '127.0.0.1', port: second.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: false });
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: second.address().port });
    await until(() => (at.second >= 3 ? true : undefined));
    const firstSoFar = at.first;
    await until(() => (at.second >= 8 ? true : undefined));
    // Read three packets after the move: anything sent to the old address before it has landed by then.
    expect(at.first - firstSoFar).toBe(0);
    // Around the move itself: at most the one packet sent before it and not yet read.
    expect(at.first - beforeMove).toBeLessThanOrEqual(1);
    // A hold to 0.0.0.0 stops sending altogether (no target).
    ep.configure({ address: '0.0.0.0', port: second.address().port, payloadType: 0, dtmfPayloadType: 101, send: false, expectReceive: false });
    expect(ep.remoteAddress).toBeNull();
  });

  it("with latching 'signalled' never takes media from anyone but the SDP source", async () => {
    const ep = await RtpEndpoint.open({
      bindAddress: '127.0.0.1',
      portMin: 40000,
      portMax: 44999,
      timeoutMs: 5000,
      clock: new MediaClock(),
      latching: 'signalled',
    });
    opened.push(ep);
    const caller = await peer();
    const intruder = await peer();
    ep.configure({ address: '127.0.0.1', port: caller.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    const payload = mulawEncode(new Int16Array(160).fill(1000));
    for (let i = 0; i < 5; i++)
      intruder.send(serializeRtp({ marker: false, payloadType: 0, sequence: i, timestamp: i * 160, ssrc: 66, payload }), ep.port, '127.0.0.1');
    await until(() => (ep.stats.ignoredSource >= 5 ? true : undefined));
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: caller.address().port }); // still the SDP's
    expect(ep.stats.packetsIn).toBe(0);
  });

  it('reassembles 10 ms and 30 ms packets into 20 ms frames', async () => {
    for (const samplesPerPacket of [80, 240]) {
      const ep = await endpoint();
      const far = await peer();
      ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 0, dtmfPayloadType: null, send: false, expectReceive: true });
      const frames: Int16Array[] = [];
      ep.onFrames((f) => frames.push(f));
      const payload = mulawEncode(new Int16Array(samplesPerPacket).fill(3000));
      // 120 ms of audio in one burst (more would be cut back to the target delay as a stall burst).
      for (let i = 0; i < 960 / samplesPerPacket; i++)
        far.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: i, timestamp: i * samplesPerPacket, ssrc: 3, payload }), ep.port, '127.0.0.1');
      await until(() => (frames.filter((f) => Math.abs((f[0] ?? 0) - 3000) < 150 && Math.abs((f[159] ?? 0) - 3000) < 150).length >= 4 ? true : undefined));
    }
  });

  it('receives and sends RFC 4733 digits', async () => {
    const ep = await endpoint();
    const far = await peer();
    ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    const digits: string[] = [];
    ep.on('dtmf', (d) => digits.push(d.digit));
    let seq = 0;
    for (const p of digitPackets('7', 60))
      far.send(serializeRtp({ marker: false, payloadType: 101, sequence: seq++, timestamp: 800, ssrc: 5, payload: p.payload }), ep.port, '127.0.0.1');
    await until(() => (digits.length ? true : undefined));
    expect(digits).toEqual(['7']);
    const events: number[] = [];
    far.on('message', (m) => {
      const p = parseRtp(m)!;
      if (p.payloadType === 101) events.push(defined(p.payload[0], 'event code'));
    });
    ep.sendDigit('#', 60);
    await until(() => (events.length >= 5 ? true : undefined));
    expect(events.every((e) => e === 11)).toBe(true);
  });

  it('reports an RTP timeout when the peer stops sending', async () => {
    const ep = await endpoint({ timeoutMs: 300 });
    const far = await peer();
    ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 8, dtmfPayloadType: null, send: true, expectReceive: true });
    await once(ep, 'timeout');
  });

  it('sends a frame played during a tick in that same tick (late phase), not one tick later', async () => {
    const { clock, tick, ep, got } = await drivenEndpoint();
    // A pacer on the same clock that subscribed after the endpoint releases a loud frame in tick 1.
    let released = false;
    clock.subscribe(() => {
      if (!released) ep.playFrame(new Int16Array(160).fill(8000));
      released = true;
    });
    tick();
    await until(() => (got.length >= 1 ? true : undefined));
    expect(ep.stats.packetsOut).toBe(1);
    expect(got[0]!.payload[0]).toBe(mulawEncode(new Int16Array([8000]))[0]);
    expect(ep.outQueueDepth).toBe(0);
  });

  // A frame a tick late (a socket client's, a pacer gap) used to leave 20 ms of silence mid-speech.
  it('bridges one missing frame with the last one faded, then sends silence; nothing of audio cleared for a barge-in', async () => {
    const { tick, ep, got } = await drivenEndpoint();
    const level = (n: number) => new Int16Array(160).fill(n);
    const sendTicks = async (frames: (Int16Array | 'clear' | null)[]) => {
      for (const f of frames) {
        if (f === 'clear') ep.clearOutput();
        else if (f) ep.playFrame(f);
        tick();
      }
      await until(() => (got.length >= ep.stats.packetsOut ? true : undefined));
    };
    await sendTicks([level(8000), null, level(4000), null, null, level(8000), 'clear', level(4000), 'clear']);
    const heard = got.map((p) => mulawDecode(Buffer.from(p!.payload))[0]);
    const about = (x: number | undefined, n: number) => x !== undefined && Math.abs(x - n) <= Math.max(8, n * 0.03);
    expect(heard).toHaveLength(9);
    expect([about(heard[0], 8000), about(heard[1], 5600), about(heard[2], 4000), about(heard[3], 2800)]).toEqual([true, true, true, true]);
    expect(heard[4]).toBe(0); // one repeat only
    expect(about(heard[5], 8000)).toBe(true);
    expect(heard[6]).toBe(0); // cleared (barge-in): not repeated
    expect(about(heard[7], 4000)).toBe(true);
    expect(heard[8]).toBe(0);
  });
});

/**
 * An endpoint on a clock the test drives (reads, ordinary listeners, then late ones, like MediaClock),
 * sending to a peer that collects its packets; `o` as in RtpEndpointOptions (jitter default: two frames, fixed).
 */
async function drivenEndpoint(o: Partial<Pick<RtpEndpointOptions, 'jitter' | 'nativeIo'>> = {}) {
  const phases = { reads: new Set<TickListener>(), playout: new Set<TickListener>(), late: new Set<TickListener>() };
  const listen = (set: Set<TickListener>) => (fn: TickListener) => {
    set.add(fn);
    return () => set.delete(fn);
  };
  const clock = { subscribeEarly: listen(phases.reads), subscribe: listen(phases.playout), subscribeLate: listen(phases.late) } satisfies TickSource;
  const run = (phase: keyof typeof phases, tick = 1) => [...phases[phase]].forEach((fn) => fn(tick));
  const tick = () => {
    run('reads');
    run('playout');
    run('late');
  };
  const ep = await RtpEndpoint.open({
    bindAddress: '127.0.0.1',
    portMin: 40000,
    portMax: 44999,
    timeoutMs: 5000,
    clock,
    jitter: { targetFrames: 2, adaptive: false },
    ...o,
  });
  opened.push(ep);
  const far = await peer();
  const got: ReturnType<typeof parseRtp>[] = [];
  far.on('message', (m) => got.push(parseRtp(m)));
  ep.configure({ address: '127.0.0.1', port: far.address().port, payloadType: 0, dtmfPayloadType: null, send: true, expectReceive: false });
  return { clock, tick, run, ep, far, got };
}

/** Sends `n` packets of `level` from `from` to the endpoint's port, sequence numbers from `seq`. */
function sendLevel(from: dgram.Socket, to: RtpEndpoint, level: number, n: number, seq: number, ssrc: number): void {
  const payload = mulawEncode(new Int16Array(160).fill(level));
  for (let i = 0; i < n; i++)
    from.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: seq + i, timestamp: (seq + i) * 160, ssrc, payload }), to.port, '127.0.0.1');
}

const near = (f: Int16Array, level: number): boolean => Math.abs((f[0] ?? 0) - level) < 150;

// MEDIA_IO_CONNECT: a batched socket is connected to its leg's source once the latch settles on the
// signalled one, so the kernel drops every other source's packets and sends go without a route lookup.
describe.each<SocketIo>(['native', 'native-no-uring', 'native-sync-send', 'native-recv-thread'])('RtpEndpoint connected to a settled source (%s)', (io) => {
  beforeEach(() => useSocketIo(io));

  it('takes the caller over a NAT-latched intruder, then leaves the intruder to the kernel and still sends to the caller', async () => {
    const { ep, caller, intruder, frames, latched } = await hijackScene(true);
    // Before the caller speaks the socket is not connected: the intruder latches (NAT window) and is played.
    sendLevel(intruder, ep, -8000, 3, 0, 66);
    await until(() => (frames.some((f) => near(f, -8000)) ? true : undefined));
    sendLevel(caller, ep, 3000, 3, 500, 7);
    await until(() => (frames.some((f) => near(f, 3000)) ? true : undefined));
    expect(latched).toEqual([intruder.address().port, caller.address().port]);
    const straysBefore = ep.stats.ignoredSource;
    const packetsBefore = ep.stats.packetsIn;
    // Settled and connected: the intruder's packets, sent before the caller's next ones, never reach the leg.
    const heard: number[] = [];
    caller.on('message', (m) => heard.push(defined(parseRtp(m), 'RTP to the caller').payload[0] ?? -1));
    frames.length = 0;
    sendLevel(intruder, ep, -8000, 8, 3, 66);
    sendLevel(caller, ep, 5000, 8, 503, 7);
    await until(() => (ep.stats.packetsIn >= packetsBefore + 8 ? true : undefined));
    expect(ep.stats.ignoredSource).toBe(straysBefore);
    await until(() => (frames.some((f) => near(f, 5000)) ? true : undefined));
    expect(frames.some((f) => near(f, -8000))).toBe(false);
    // The leg's sends go to the connected caller (without a destination of their own).
    ep.playFrame(new Int16Array(160).fill(1000));
    const loud = mulawEncode(new Int16Array([1000]))[0];
    await until(() => (heard.includes(loud ?? -2) ? true : undefined));
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: caller.address().port });
  });

  it('takes media from the new source once a re-INVITE moves the stream away from a connected one', async () => {
    const ep = await endpoint({ connectSettled: true });
    const first = await peer();
    const second = await peer();
    const frames: Int16Array[] = [];
    ep.onFrames((f) => frames.push(f));
    ep.configure({ address: '127.0.0.1', port: first.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    sendLevel(first, ep, 3000, 3, 0, 1);
    await until(() => (frames.some((f) => near(f, 3000)) ? true : undefined));
    ep.configure({ address: '127.0.0.1', port: second.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    const sentToSecond: number[] = [];
    second.on('message', () => sentToSecond.push(1));
    sendLevel(second, ep, -5000, 3, 100, 2);
    await until(() => (frames.some((f) => near(f, -5000)) ? true : undefined));
    expect(ep.remoteAddress).toEqual({ address: '127.0.0.1', port: second.address().port });
    await until(() => (sentToSecond.length >= 3 ? true : undefined));
    // Settled on the second source: the first one is now left to the kernel.
    const strays = ep.stats.ignoredSource;
    const packetsBefore = ep.stats.packetsIn;
    sendLevel(first, ep, 3000, 4, 3, 1);
    sendLevel(second, ep, -5000, 4, 103, 2);
    await until(() => (ep.stats.packetsIn >= packetsBefore + 4 ? true : undefined));
    expect(ep.stats.ignoredSource).toBe(strays);
  });

  it("with latching 'signalled' counts the strays before the SDP source speaks, not after", async () => {
    const ep = await endpoint({ connectSettled: true, latching: 'signalled' });
    const caller = await peer();
    const intruder = await peer();
    ep.configure({ address: '127.0.0.1', port: caller.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true });
    sendLevel(intruder, ep, 1000, 5, 0, 66);
    await until(() => (ep.stats.ignoredSource >= 5 ? true : undefined));
    sendLevel(caller, ep, 2000, 3, 10, 7);
    await until(() => (ep.stats.packetsIn >= 3 ? true : undefined));
    sendLevel(intruder, ep, 1000, 5, 5, 66);
    sendLevel(caller, ep, 2000, 3, 13, 7);
    await until(() => (ep.stats.packetsIn >= 6 ? true : undefined));
    expect(ep.stats.ignoredSource).toBe(5);
  });
});

describe('RtpEndpoint on batched sockets read at the tick (MEDIA_IO=native)', () => {
  beforeEach(() => useSocketIo('native'));

  it('reads its socket again before concealing a frame that came after the tick read it', async () => {
    const { run, ep, far: phone } = await drivenEndpoint({ nativeIo: true, jitter: { targetFrames: 1, adaptive: false } });
    const played: number[] = [];
    ep.onFrames((f) => played.push(f[0] ?? NaN));
    // Resolves once the kernel took the datagram: on loopback it is then in the endpoint's socket.
    const send = (seq: number, level: number) =>
      new Promise<void>((resolve, reject) => {
        const payload = mulawEncode(new Int16Array(160).fill(level));
        const packet = serializeRtp({ marker: seq === 0, payloadType: 0, sequence: seq, timestamp: seq * 160, ssrc: 9, payload });
        phone.send(packet, ep.port, '127.0.0.1', (err) => (err ? reject(err) : resolve()));
      });
    const heard = (level: number) => mulawDecode(mulawEncode(new Int16Array([level])))[0];

    await send(0, 1000);
    run('reads'); // the tick's read takes frame 0
    run('playout');
    run('reads'); // nothing yet...
    await send(1, 2000); // ...frame 1 comes after the read, before the leg plays out
    run('playout');
    expect(played).toEqual([heard(1000), heard(2000)]); // not frame 0 repeated at 70 %
  });
});
