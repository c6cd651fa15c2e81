// RTCP (RFC 3550 §6) and call quality: packets round-trip, the E-model's reference points, and a
// real UDP peer written here that drops and delays RTP and sends its own RTCP to an RtpEndpoint.
import { describe, expect, it, afterEach } from 'vitest';
import dgram from 'node:dgram';
import { RtpEndpoint } from '../../../src/telephony/rtp/endpoint.js';
import { MediaClock } from '../../../src/media/index.js';
import { serializeRtp, parseRtp } from '../../../src/telephony/rtp/packet.js';
import { buildReport, parseRtcp, looksLikeRtcp, ntpNow, ntpMiddle, type RtcpReport } from '../../../src/telephony/rtp/rtcp.js';
import { estimateMos, LegQuality } from '../../../src/telephony/rtp/call-quality.js';
import { mulawEncode } from '../../../src/media/g711.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { untilKernelStampsArrivals } from '../../helpers/kernel-stamps.js';
import { NativeRtpIo, nativeRtpIoAddon } from '../../../src/telephony/rtp/native-io.js';
import type { PacketInfo } from '../../../src/telephony/rtp/socket-protocol.js';

const cleanup: Array<() => void> = [];
afterEach(() => cleanup.splice(0).forEach((f) => f()));

function until<T>(fn: () => T | undefined | false, ms = 10000): Promise<T> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      const v = fn();
      if (v) {
        clearInterval(t);
        resolve(v);
      } else if (Date.now() - start > ms) {
        clearInterval(t);
        reject(new Error('timed out'));
      }
    }, 5);
  });
}

async function udp(port = 0): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', () => r()));
  cleanup.push(() => {
    try {
      s.close();
    } catch {
      /* closed */
    }
  });
  return s;
}

describe('RTCP packets', () => {
  it('builds an SR with a report block and CNAME that parses back, and tells RTCP from RTP', () => {
    const buf = buildReport(
      0x11223344,
      { ntpSec: 100, ntpFrac: 200, rtpTimestamp: 300, packetCount: 4, octetCount: 640 },
      { ssrc: 7, fractionLost: 25, cumulativeLost: -3, extendedHighestSeq: 70000, jitter: 12, lastSr: 5, delaySinceLastSr: 6 },
      'gw@example',
    );
    expect(buf.length % 4).toBe(0);
    expect(looksLikeRtcp(buf)).toBe(true);
    expect(looksLikeRtcp(serializeRtp({ marker: true, payloadType: 0, sequence: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(160) }))).toBe(false);
    const p = parseRtcp(buf)!;
    expect(p.reports).toEqual([
      {
        type: 'sr',
        ssrc: 0x11223344,
        sender: { ntpSec: 100, ntpFrac: 200, rtpTimestamp: 300, packetCount: 4, octetCount: 640 },
        blocks: [{ ssrc: 7, fractionLost: 25, cumulativeLost: -3, extendedHighestSeq: 70000, jitter: 12, lastSr: 5, delaySinceLastSr: 6 }],
      },
    ]);
    expect(parseRtcp(buf.subarray(0, buf.length - 4))).toBeNull(); // truncated compound
  });

  it('counts loss across a sequence wrap (RFC 3550 §A.1, §A.3)', () => {
    const q = new LegQuality();
    for (let s = 65500; s < 65500 + 200; s++) if (s % 20 !== 10) q.onRtp(9, s & 0xffff, (s * 160) >>> 0, (s - 65500) * 20);
    const snap = q.snapshot(0, 60);
    expect(snap.packets_received).toBe(190);
    expect(snap.packets_lost).toBe(10);
    expect(snap.loss_percent).toBe(5);
    expect(snap.jitter_ms).toBeLessThan(0.5);
  });
});

describe('Round trip from millisecond clocks', () => {
  const block = (lastSr: number, delaySinceLastSr: number) => ({
    ssrc: 1,
    fractionLost: 0,
    cumulativeLost: 0,
    extendedHighestSeq: 0,
    jitter: 0,
    lastSr,
    delaySinceLastSr,
  });

  it('takes a round trip that comes out just below zero as 0, and one far below zero as no measurement', () => {
    const q = new LegQuality();
    const sentAt = ntpMiddle(100, 0x80000000); // our SR at 100.5 s
    q.onSentSenderReport(sentAt);
    q.onReportAboutUs(block(sentAt, 0), sentAt - 16); // the answer dated 0.24 ms before the SR
    expect(q.snapshot(0, 60).rtt_ms).toBe(0);
    q.onReportAboutUs(block(sentAt, 0), sentAt + 655); // 10 ms later
    expect(q.snapshot(0, 60).rtt_ms).toBe(10);
    q.onReportAboutUs(block(sentAt, 65536), sentAt + 655); // a DLSR of 1 s: 990 ms below zero, not a round trip
    expect(q.snapshot(0, 60).rtt_ms).toBe(10);
  });

  it('reports a DLSR of 0, not a wrapped negative one, for an SR that arrived within the current millisecond', () => {
    const q = new LegQuality();
    q.onRtp(9, 1, 160, 0);
    q.onSenderReport({ ntpSec: 1, ntpFrac: 0, rtpTimestamp: 0, packetCount: 1, octetCount: 160 }, 1000.7);
    const b = q.reportBlock(1000);
    expect(b?.delaySinceLastSr).toBe(0);
  });
});

describe('E-model MOS (ITU-T G.107, G.711)', () => {
  it('gives about 4.4 for a clean short call and falls with loss and delay', () => {
    expect(estimateMos(0, 0)).toBeCloseTo(4.41, 1);
    expect(estimateMos(1, 50)).toBeLessThan(estimateMos(0, 50));
    expect(estimateMos(5, 50)).toBeLessThan(3.3);
    expect(estimateMos(0, 400)).toBeLessThan(estimateMos(0, 100));
    expect(estimateMos(100, 0)).toBe(1);
  });
});

/** An endpoint sending RTCP every 200 ms, closed after the test; `nativeIo`: its RTP and RTCP sockets batched (MEDIA_IO=native). */
async function openEndpoint(nativeIo = false): Promise<RtpEndpoint> {
  const ep = await RtpEndpoint.open({
    bindAddress: '127.0.0.1',
    portMin: 46000,
    portMax: 47999,
    timeoutMs: 10000,
    clock: new MediaClock(),
    rtcpIntervalMs: 200,
    nativeIo,
  });
  cleanup.push(() => ep.close());
  return ep;
}

/** A peer's sockets: RTP on an even port, RTCP on the next (or on the RTP port with mux). */
async function peerSockets(mux: boolean): Promise<{ rtp: dgram.Socket; rtcp: dgram.Socket }> {
  for (let port = 48000; port < 49000; port += 2) {
    try {
      const rtp = await udp(port);
      return { rtp, rtcp: mux ? rtp : await udp(port + 1) };
    } catch {
      /* taken: the next pair */
    }
  }
  throw new Error('no free port pair for the peer');
}

async function rtcpScenario(mux: boolean, nativeIo = false) {
  const ep = await openEndpoint(nativeIo);
  const { rtp, rtcp } = await peerSockets(mux);
  const peerSsrc = 0xabcdef01;
  ep.configure({ address: '127.0.0.1', port: rtp.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true, rtcpMux: mux });
  const reports: RtcpReport[] = [];
  const onRtcp = (m: Buffer, from: dgram.RemoteInfo) => {
    if (!looksLikeRtcp(m)) return;
    const p = parseRtcp(m);
    if (!p) return;
    reports.push(...p.reports);
    // Answer every SR at once with an RR on it (DLSR 0): the gateway can then measure the round trip.
    const sr = p.reports.find((r) => r.sender);
    if (sr) {
      rtcp.send(
        buildReport(
          peerSsrc,
          null,
          {
            ssrc: sr.ssrc,
            fractionLost: 64,
            cumulativeLost: 3,
            extendedHighestSeq: 1,
            jitter: 80,
            lastSr: ntpMiddle(sr.sender!.ntpSec, sr.sender!.ntpFrac),
            delaySinceLastSr: 0,
          },
          'peer',
        ),
        from.port,
        from.address,
      );
    }
  };
  rtcp.on('message', onRtcp);
  // 200 packets, every 10th dropped, sent in uneven bursts (jitter): 10 % loss.
  const payload = mulawEncode(new Int16Array(160).fill(500));
  for (let burst = 0; burst < 20; burst++) {
    for (let i = burst * 10; i < burst * 10 + 10; i++) {
      if (i % 10 === 5) continue;
      rtp.send(serializeRtp({ marker: i === 0, payloadType: 0, sequence: 1000 + i, timestamp: i * 160, ssrc: peerSsrc, payload }), ep.port, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, burst % 2 ? 5 : 60));
  }
  // The peer's own SR, so the gateway's next report carries LSR/DLSR for it.
  const now = ntpNow();
  rtcp.send(
    buildReport(peerSsrc, { ntpSec: now.sec, ntpFrac: now.frac, rtpTimestamp: 0, packetCount: 180, octetCount: 28800 }, null, 'peer'),
    mux ? ep.port : ep.port + 1,
    '127.0.0.1',
  );
  ep.playFrame(new Int16Array(160));
  await until(() => ep.callQuality.rtt_ms !== null && reports.some((r) => r.blocks.some((b) => b.ssrc === peerSsrc && b.lastSr !== 0)));
  return { ep, reports, peerSsrc, rtp, rtcp };
}

describe('RTCP on a leg, against a UDP peer that drops and delays packets', () => {
  for (const [mux, nativeIo] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`reports loss, jitter, round trip and MOS both ways (${mux ? 'rtcp-mux, RFC 5761' : 'RTCP on port + 1'}, ${nativeIo ? 'batched' : 'dgram'} sockets)`, async () => {
      const { ep, reports, peerSsrc } = await rtcpScenario(mux, nativeIo);
      const q = ep.callQuality;
      expect(q.packets_received).toBe(180);
      expect(q.packets_lost).toBe(20);
      expect(q.loss_percent).toBe(10);
      expect(q.jitter_ms).toBeGreaterThan(1); // the bursts
      expect(q.rtt_ms).toBeGreaterThanOrEqual(0);
      expect(q.remote).toEqual({ loss_percent: 25, jitter_ms: 10 }); // what the peer said: 64/256, 80 ts units
      expect(q.mos).toBeLessThan(estimateMos(0, 60));
      expect(q.rtcp.received).toBeGreaterThan(0);
      expect(q.rtcp.mux).toBe(mux);
      // What the gateway told the peer about its stream.
      const about = reports
        .flatMap((r) => r.blocks)
        .filter((b) => b.ssrc === peerSsrc)
        .at(-1)!;
      expect(about.cumulativeLost).toBe(20);
      expect(about.extendedHighestSeq).toBe(1000 + 199);
      expect(reports.some((r) => r.type === 'sr' && r.sender!.packetCount > 0)).toBe(true);
    });
  }

  it('spreads its reports: each interval is the nominal one times a random factor in [0.5, 1.5] (RFC 3550 §6.3.1)', async () => {
    // Ticked by hand, one tick per loop turn: a report sent in tick k is read before tick k + 1.
    const clock = new ManualClock();
    const ep = await RtpEndpoint.open({ bindAddress: '127.0.0.1', portMin: 46000, portMax: 47999, timeoutMs: 60000, clock, rtcpIntervalMs: 200 });
    cleanup.push(() => ep.close());
    const peer = await udp();
    const reportTicks: number[] = [];
    peer.on('message', (m) => {
      if (looksLikeRtcp(m)) reportTicks.push(clock.n);
    });
    ep.configure({ address: '127.0.0.1', port: peer.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: false, rtcpMux: true });
    while (reportTicks.length < 25 && clock.n < 3000) {
      clock.tick();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const gaps = reportTicks.slice(1).map((t, i) => t - (reportTicks[i] ?? t));
    expect(gaps.length).toBeGreaterThanOrEqual(20);
    // 10 ticks nominal: 5 to 15, give or take the tick a report is read in.
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(4);
      expect(gap).toBeLessThanOrEqual(16);
    }
    expect(new Set(gaps).size).toBeGreaterThan(1);
  });

  it.each([
    [true, false],
    [false, true],
  ])('ends with an RTCP BYE (rtcp-mux: %s, batched sockets: %s)', async (mux, nativeIo) => {
    const { ep, rtcp } = await rtcpScenario(mux, nativeIo);
    const bye = new Promise<boolean>((resolve) =>
      rtcp.on('message', (m) => {
        if (looksLikeRtcp(m) && m[1] === 203) resolve(true);
        else if (!looksLikeRtcp(m)) parseRtp(m);
      }),
    );
    ep.close();
    expect(await bye).toBe(true);
  });

  it("takes the round trip, and the delay since the peer's SR it reports, from when RTCP arrived, not from when a tick read it (batched sockets, RTCP on port + 1)", async () => {
    // Timestamps on first (the endpoint's sockets keep them on once the kernel has turned them on).
    const probeClock = new ManualClock();
    const probe = new NativeRtpIo(nativeRtpIoAddon(), probeClock).bind('127.0.0.1', 0)!;
    cleanup.push(() => probe.close());
    const probed = { info: [] as PacketInfo[] };
    probe.on('message', (_m, info) => probed.info.push(info));
    await untilKernelStampsArrivals(await udp(), probe, probed, () => probeClock.tick());

    // One report per 1,000–3,000 ticks: ticked by hand, the endpoint sends no second SR before the peer's answer is read.
    const clock = new ManualClock();
    const ep = await RtpEndpoint.open({
      bindAddress: '127.0.0.1',
      portMin: 46000,
      portMax: 47999,
      timeoutMs: 600000,
      clock,
      rtcpIntervalMs: 40000,
      nativeIo: true,
    });
    cleanup.push(() => ep.close());
    const { rtp, rtcp } = await peerSockets(false);
    const peerSsrc = 0x5eed0001;
    let peerSr = 0;
    let answerSent = false;
    const blocksAboutPeer: { lastSr: number; delaySinceLastSr: number }[] = [];
    rtcp.on('message', (m, from) => {
      const p = parseRtcp(m);
      if (!p) return;
      for (const r of p.reports) blocksAboutPeer.push(...r.blocks.filter((b) => b.ssrc === peerSsrc));
      const sr = p.reports.find((r) => r.sender);
      if (!sr?.sender || peerSr !== 0) return;
      // Answered at once: our SR's round trip (DLSR 0), and an SR of the peer's own.
      const now = ntpNow();
      peerSr = ntpMiddle(now.sec, now.frac);
      const aboutUs = {
        ssrc: sr.ssrc,
        fractionLost: 0,
        cumulativeLost: 0,
        extendedHighestSeq: 0,
        jitter: 0,
        lastSr: ntpMiddle(sr.sender.ntpSec, sr.sender.ntpFrac),
        delaySinceLastSr: 0,
      };
      const answer = buildReport(peerSsrc, { ntpSec: now.sec, ntpFrac: now.frac, rtpTimestamp: 0, packetCount: 1, octetCount: 160 }, aboutUs, 'peer');
      rtcp.send(answer, from.port, from.address, () => (answerSent = true));
    });
    ep.configure({ address: '127.0.0.1', port: rtp.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: false, rtcpMux: false });
    // A packet of the peer's stream: our reports carry a block about it (and its LSR/DLSR) only once one came.
    rtp.send(serializeRtp({ marker: true, payloadType: 0, sequence: 1, timestamp: 0, ssrc: peerSsrc, payload: new Uint8Array(160) }), ep.port, '127.0.0.1');
    // Ticked until our first SR is made, then not at all until the peer has answered it: a later SR would
    // be the one an answer's LSR must name.
    while (ep.callQuality.rtcp.sent === 0 && clock.n < 10000) {
      clock.tick();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => answerSent);
    // The answer waits this long in the endpoint's socket before a tick reads it.
    const HOLD_MS = 1000;
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    const readFrom = clock.n;
    while (ep.callQuality.rtt_ms === null && clock.n <= readFrom + 50) {
      clock.tick();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(ep.callQuality.rtt_ms).not.toBeNull();
    expect(ep.callQuality.rtt_ms!).toBeLessThan(HOLD_MS / 2);
    // Our next report tells the peer how long ago its SR arrived: the hold included.
    while (!blocksAboutPeer.some((b) => b.lastSr === peerSr) && clock.n < readFrom + 10000) {
      clock.tick();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const block = blocksAboutPeer.find((b) => b.lastSr === peerSr);
    expect(block).toBeDefined();
    expect(block!.delaySinceLastSr / 65536).toBeGreaterThanOrEqual(HOLD_MS / 1000);
  });

  it('sends no BYE for a leg that never sent RTP or RTCP (RFC 3550 §6.3.7)', async () => {
    const ep = await openEndpoint();
    const peer = dgram.createSocket('udp4');
    cleanup.push(() => peer.close());
    await new Promise<void>((resolve) => peer.bind({ port: 0, address: '127.0.0.1' }, resolve));
    const received: Buffer[] = [];
    peer.on('message', (m) => received.push(m));
    // Closed before its first media-clock tick: it never sent, so it must not say goodbye with an RTCP BYE.
    ep.configure({ address: '127.0.0.1', port: peer.address().port, payloadType: 0, dtmfPayloadType: 101, send: true, expectReceive: true, rtcpMux: true });
    ep.close();
    // A fence sent after the close: anything the endpoint sent on closing arrives before it.
    const fence = dgram.createSocket('udp4');
    cleanup.push(() => fence.close());
    fence.send(Buffer.from('fence'), peer.address().port, '127.0.0.1');
    await until(() => received.some((m) => m.toString() === 'fence'));
    expect(received.filter((m) => looksLikeRtcp(m))).toEqual([]);
  });
});
