// Concurrent bridged calls: N SIP calls into N assistive-translation sessions, each with a socket
// consumer. Every call streams PCMA at 20 ms both ways; the customer's audio is bridged to the
// agent's socket as audio.output (engines off, so the media path itself is measured).
//
// Latency: every 25th frame sent is a loud tone burst; its arrival on the socket (first loud
// audio.output frame) minus its send time is the added latency RTP-in → socket-out.
// Loss: audio.output frames received vs RTP frames sent (in), RTP frames received by the phone
// vs 50/s (out). The gateway runs in this process; CPU and memory include the load generator
// (UA, RTP senders, sockets), so per-call figures are upper bounds.
import dgram from 'node:dgram';
import WebSocket from 'ws';
import { startStreamGateway, type StreamTestGateway } from '../../test/helpers/stream.js';
import * as repo from '../../src/store/telephony-repo.js';
import { updateOrg } from '../../src/store/index.js';
import { UserAgent } from '../../src/telephony/sip/user-agent.js';
import type { Dialog } from '../../src/telephony/sip/dialog.js';
import { buildSdp, parseSdp } from '../../src/telephony/sdp/sdp.js';
import { serializeRtp, parseRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode, mulawDecode } from '../../src/media/g711.js';
import type { Telephony } from '../../src/telephony/index.js';

export interface ConcurrentResult {
  calls: number;
  connected: number;
  seconds: number;
  framesSent: number;
  framesToSocket: number;
  lossInPercent: number;
  rtpOutExpected: number;
  rtpOutReceived: number;
  lossOutPercent: number;
  burstsSent: number;
  burstsDelivered: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuPercentOfOneCore: number;
  cpuMsPerCallSecond: number;
  rssMbPerCall: number;
}

const LOUD = (() => {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(12000 * Math.sin((2 * Math.PI * 1000 * i) / 8000));
  return alawEncode(f);
})();
const QUIET = alawEncode(new Int16Array(160).fill(8));
const BURST_EVERY = 25;

interface CallState {
  sessionId: string;
  ws: WebSocket;
  peer: dgram.Socket;
  dialog: Dialog | null;
  gwPort: number;
  seq: number;
  lastLoudSentAt: number;
  awaitingLoud: boolean;
  latencies: number[];
  framesToSocket: number;
  rtpIn: number;
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
}

async function runOnce(t: StreamTestGateway, telephony: Telephony, ua: UserAgent, calls: number, seconds: number): Promise<ConcurrentResult> {
  const conn = await repo.createConnection(t.gw.db, { orgId: t.org.orgId, provider: 'carrier_a', host: '127.0.0.1', port: 5060, transport: 'udp', inboundCidrs: ['127.0.0.0/8'] });
  const states: CallState[] = [];
  const base = 1e6 + Math.floor(Math.random() * 8e6);
  for (let i = 0; i < calls; i++) {
    const number = `+1${base + i * 10}`.slice(0, 12);
    await repo.createPhoneNumber(t.gw.db, { orgId: t.org.orgId, number, connectionId: conn.id });
    const { id, token } = await t.createSession({ mode: 'assistive_translation', source_language: 'en', target_language: 'es', routing: { phone_number: number } });
    await t.gw.db.query('UPDATE sessions SET phone_number = $2 WHERE id = $1', [id, number]);
    const ws = new WebSocket(t.wsUrl(id, token));
    await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((res) => peer.bind(0, '127.0.0.1', () => res()));
    const st: CallState = { sessionId: id, ws, peer, dialog: null, gwPort: 0, seq: 0, lastLoudSentAt: 0, awaitingLoud: false, latencies: [], framesToSocket: 0, rtpIn: 0 };
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (!text.startsWith('{"type":"audio.output"')) return;
      st.framesToSocket++;
      if (!st.awaitingLoud) return;
      const payload = /"payload":"([^"]+)"/.exec(text)?.[1];
      if (!payload) return;
      const pcm = mulawDecode(Buffer.from(payload, 'base64'));
      let peak = 0;
      for (let k = 0; k < pcm.length; k++) peak = Math.max(peak, Math.abs(pcm[k]));
      if (peak > 6000) {
        st.latencies.push(performance.now() - st.lastLoudSentAt);
        st.awaitingLoud = false;
      }
    });
    peer.on('message', (m) => {
      if (parseRtp(m)) st.rtpIn++;
    });
    const offer = buildSdp({ address: '127.0.0.1', port: peer.address().port, sessionId: String(i), sessionVersion: 1, codecs: [{ payloadType: 8, name: 'PCMA' }], dtmfPayloadType: 101, direction: 'sendrecv' });
    try {
      st.dialog = await ua.call(`sip:${number}@127.0.0.1:${telephony.sipPort}`, { from: 'sip:+15550000000@127.0.0.1', sdp: offer, ringTimeoutMs: 20000 });
      st.gwPort = parseSdp(st.dialog.remoteSdp!).audio!.port;
    } catch (err) {
      console.error(`call ${i} failed: ${String(err)}`);
    }
    states.push(st);
  }
  const live = states.filter((s) => s.gwPort > 0);
  // One drift-free sender loop for all calls (a phone's clock, not setInterval's).
  const start = performance.now();
  let tick = 0;
  const totalTicks = seconds * 50;
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  let rss0 = process.memoryUsage().rss;
  const warmupTicks = 50;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(totalTicks, Math.floor((performance.now() - start) / 20));
      for (; tick < due; tick++) {
        if (tick === warmupTicks) {
          cpu0 = process.cpuUsage();
          t0 = performance.now();
          rss0 = process.memoryUsage().rss;
          for (const s of live) {
            s.latencies = [];
            s.framesToSocket = 0;
            s.rtpIn = 0;
          }
        }
        const loud = tick % BURST_EVERY === 0;
        const now = performance.now();
        for (const s of live) {
          s.peer.send(serializeRtp({ marker: s.seq === 0, payloadType: 8, sequence: s.seq & 0xffff, timestamp: (s.seq * 160) >>> 0, ssrc: 1234, payload: loud ? LOUD : QUIET }), s.gwPort, '127.0.0.1');
          s.seq++;
          if (loud) {
            s.lastLoudSentAt = now;
            s.awaitingLoud = true;
          }
        }
      }
      if (tick >= totalTicks) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const rss = process.memoryUsage().rss;
  // Counters are read at the end of sending: the gateway keeps emitting (concealment, silence)
  // afterwards, and the window start and end both lag by the same path latency.
  const framesToSocket = live.reduce((a, s) => a + s.framesToSocket, 0);
  const rtpOutReceived = live.reduce((a, s) => a + s.rtpIn, 0);
  const burstsSent = live.length * Math.floor((totalTicks - warmupTicks) / BURST_EVERY);
  // Let in-flight frames land.
  await new Promise((r) => setTimeout(r, 500));
  const measuredTicks = totalTicks - warmupTicks;
  const framesSent = measuredTicks * live.length;
  const latencies = live.flatMap((s) => s.latencies);
  const cpuSec = (cpu.user + cpu.system) / 1e6;
  for (const s of live) await s.dialog?.bye('bench_done');
  for (const s of states) {
    s.ws.close();
    s.peer.close();
  }
  return {
    calls,
    connected: live.length,
    seconds: Math.round(elapsed * 10) / 10,
    framesSent,
    framesToSocket,
    lossInPercent: Math.max(0, Math.round((1 - framesToSocket / framesSent) * 10000) / 100),
    rtpOutExpected: framesSent,
    rtpOutReceived,
    lossOutPercent: Math.max(0, Math.round((1 - rtpOutReceived / framesSent) * 10000) / 100),
    burstsSent,
    burstsDelivered: latencies.length,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    cpuPercentOfOneCore: Math.round((cpuSec / elapsed) * 100),
    cpuMsPerCallSecond: Math.round(((cpuSec * 1000) / (elapsed * Math.max(1, live.length))) * 100) / 100,
    rssMbPerCall: Math.round(((rss - rss0) / 1e6 / Math.max(1, live.length)) * 100) / 100,
  };
}

export async function measureConcurrent(o: { callCounts?: number[]; seconds: number }): Promise<ConcurrentResult[]> {
  const counts = o.callCounts ?? [50, 100, 200, 400];
  const rtpBase = 20000;
  const t = await startStreamGateway({
    engines: 'none',
    overrides: {
      roles: ['api', 'media', 'worker'],
      logLevel: 'warn',
      sip: { enabled: true, host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1', rtpPortMin: rtpBase, rtpPortMax: rtpBase + 9998, rtpTimeoutSeconds: 60, maxConcurrentCalls: 5000, realm: 'bench' },
    },
  });
  const telephony = (t.gw as unknown as { telephony: Telephony }).telephony;
  await updateOrg(t.gw.db, t.org.orgId, { sipEnabled: true, maxConcurrentSessions: 100000 });
  const ua = await UserAgent.start({ host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1' }, { onInvite: (inv) => inv.reject(603, 'Decline') });
  const results: ConcurrentResult[] = [];
  try {
    for (const calls of counts) {
      const r = await runOnce(t, telephony, ua, calls, o.seconds);
      results.push(r);
      console.log(`concurrent ${r.connected}/${calls} calls: bursts ${r.burstsDelivered}/${r.burstsSent}, loss in ${r.lossInPercent}% out ${r.lossOutPercent}%, latency p50 ${r.latencyP50Ms} ms p99 ${r.latencyP99Ms} ms, CPU ${r.cpuPercentOfOneCore}% of a core (${r.cpuMsPerCallSecond} ms CPU per call-second), RSS +${r.rssMbPerCall} MB/call`);
      for (let i = 0; i < 200 && telephony.activeCalls > 0; i++) await new Promise((res) => setTimeout(res, 50));
      if (r.lossInPercent > 1 || r.connected < calls) break;
    }
  } finally {
    ua.close();
    await t.stop();
  }
  return results;
}
