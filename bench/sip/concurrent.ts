// Concurrent bridged calls: N SIP calls into N assistive-translation sessions, each with a socket
// consumer. Every call streams PCMA at 20 ms both ways; the customer's audio is bridged to the
// agent's socket as audio.output (engines off, so the media path itself is measured).
//
// Latency: every 25th frame sent is a loud tone burst; its arrival on the socket (first loud
// audio.output frame) minus its send time is the added latency RTP-in → socket-out.
// Loss: audio.output frames received vs RTP frames sent (in), RTP frames received by the phone
// vs 50/s (out).
// The gateway runs in a child process (gateway-child.ts); CPU and memory are the child's.
// SIP_BENCH_PROFILE=<dir> writes a V8 CPU profile of the gateway there.
import type dgram from 'node:dgram';
import WebSocket from 'ws';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { UserAgent } from '../../src/telephony/sip/user-agent.js';
import type { Dialog } from '../../src/telephony/sip/dialog.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import { loopbackPhoneSdp } from './phone-sdp.js';
import { bindLoopbackUdp, bindPhonePorts } from './phone-ports.js';
import { serializeRtp, parseRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode, mulawDecode } from '../../src/media/g711.js';
import { defined } from '../defined.js';
import { nodeHeapFlags } from '../node-heap-flags.js';
import { SinkFrames, framesShort } from '../sink-frames.js';
import { audioDiscarded } from '../gateway-discards.js';

export interface ConcurrentResult {
  calls: number;
  connected: number;
  seconds: number;
  framesSent: number;
  framesToSocket: number;
  lossInPercent: number;
  /** Frames the gateway's jitter buffers discarded (drift drops, late) or concealed, over packets received. */
  gatewayDiscardPercent: number;
  gatewayConcealPercent: number;
  gatewayLoopDelayP99Ms?: number;
  rtpOutExpected: number;
  rtpOutReceived: number;
  lossOutPercent: number;
  burstsSent: number;
  burstsDelivered: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuPercentOfOneCore: number;
  loadGeneratorCpuPercent: number;
  gatewayClockLateTicks?: number;
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
  /** Holds the phone's RTCP port (phone-ports.ts). */
  peerRtcp: dgram.Socket;
  dialog: Dialog | null;
  gwPort: number;
  seq: number;
  lastLoudSentAt: number;
  awaitingLoud: boolean;
  latencies: number[];
  /** audio.output frames at the socket and RTP packets at the phone, in the window, by stream position. */
  socketSink: SinkFrames;
  rtpSink: SinkFrames;
}

const pct = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 10000) / 100 : 0);

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN) * 10) / 10;
}

interface Usage {
  stages?: Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }>;
  media?: Record<string, number>;
  cpu: NodeJS.CpuUsage;
  rss: number;
  activeCalls: number;
}

function ask<T>(child: ChildProcess, msg: object): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(msg);
  });
}

async function runOnce(child: ChildProcess, sipPort: number, ua: UserAgent, calls: number, seconds: number): Promise<ConcurrentResult> {
  const { sessions } = await ask<{ sessions: { number: string; id: string; wsUrl: string }[] }>(child, { cmd: 'prepare', calls });
  const states: CallState[] = [];
  for (let i = 0; i < calls; i++) {
    const { number, id, wsUrl } = defined(sessions[i], 'session');
    const ws = new WebSocket(wsUrl);
    await new Promise((res, rej) => {
      ws.once('open', res);
      ws.once('error', rej);
    });
    const { rtp: peer, rtcp: peerRtcp } = await bindPhonePorts(bindLoopbackUdp);
    const st: CallState = {
      sessionId: id,
      ws,
      peer,
      peerRtcp,
      dialog: null,
      gwPort: 0,
      seq: 0,
      lastLoudSentAt: 0,
      awaitingLoud: false,
      latencies: [],
      socketSink: new SinkFrames(),
      rtpSink: new SinkFrames(),
    };
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (!text.startsWith('{"type":"audio.output"')) return;
      st.socketSink.noteTimestampMs(Number(/"timestamp_ms":(\d+)/.exec(text)?.[1]));
      if (!st.awaitingLoud) return;
      const payload = /"payload":"([^"]+)"/.exec(text)?.[1];
      if (!payload) return;
      const pcm = mulawDecode(Buffer.from(payload, 'base64'));
      let peak = 0;
      for (let k = 0; k < pcm.length; k++) peak = Math.max(peak, Math.abs(pcm[k] ?? 0));
      if (peak > 6000) {
        st.latencies.push(performance.now() - st.lastLoudSentAt);
        st.awaitingLoud = false;
      }
    });
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p) st.rtpSink.noteRtpSequence(p.sequence);
    });
    const offer = loopbackPhoneSdp(peer.address().port, String(i));
    try {
      st.dialog = await ua.call(`sip:${number}@127.0.0.1:${sipPort}`, { from: 'sip:+15550000000@127.0.0.1', sdp: offer, ringTimeoutMs: 20000 });
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
  let usage0 = await ask<Usage>(child, { cmd: 'usage' });
  let t0 = performance.now();
  // Typed by assertion: it is set inside a callback, which control-flow narrowing cannot see.
  let usage0Pending = null as Promise<Usage> | null;
  let genCpu0 = process.cpuUsage();
  const warmupTicks = 50;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(totalTicks, Math.floor((performance.now() - start) / 20));
      for (; tick < due; tick++) {
        if (tick === warmupTicks) {
          usage0Pending = ask<Usage>(child, { cmd: 'usage' });
          t0 = performance.now();
          genCpu0 = process.cpuUsage();
          for (const s of live) {
            s.latencies = [];
            s.socketSink.reset();
            s.rtpSink.reset();
          }
        }
        const loud = tick % BURST_EVERY === 0;
        const now = performance.now();
        for (const s of live) {
          s.peer.send(
            serializeRtp({
              marker: s.seq === 0,
              payloadType: 8,
              sequence: s.seq & 0xffff,
              timestamp: (s.seq * 160) >>> 0,
              ssrc: 1234,
              payload: loud ? LOUD : QUIET,
            }),
            s.gwPort,
            '127.0.0.1',
          );
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
  const genCpu = process.cpuUsage(genCpu0);
  if (usage0Pending) usage0 = await usage0Pending;
  const usage1 = await ask<Usage>(child, { cmd: 'usage' });
  const cpu = { user: usage1.cpu.user - usage0.cpu.user, system: usage1.cpu.system - usage0.cpu.system };
  const rss = usage1.rss;
  const rss0 = usage0.rss;
  console.log('gateway media counters at end of sending:', JSON.stringify(usage1.media));
  // Cumulative since the gateway started (all steps so far): where a frame's time goes, per stage.
  console.log('gateway per-stage time (ms, histogram bucket bounds):', JSON.stringify(usage1.stages));
  // Counters are read at the end of sending: the gateway keeps emitting (concealment, silence)
  // afterwards, and the window start and end both lag by the same path latency.
  const measuredTicks = totalTicks - warmupTicks;
  const framesSent = measuredTicks * live.length;
  const framesToSocket = live.reduce((a, s) => a + s.socketSink.count, 0);
  const rtpOutReceived = live.reduce((a, s) => a + s.rtpSink.count, 0);
  const socketShort = framesShort(
    live.map((s) => s.socketSink),
    framesSent,
  );
  const rtpShort = framesShort(
    live.map((s) => s.rtpSink),
    framesSent,
  );
  const burstsSent = live.length * Math.floor((totalTicks - warmupTicks) / BURST_EVERY);
  // Let in-flight frames land.
  await new Promise((r) => setTimeout(r, 500));
  const latencies = live.flatMap((s) => s.latencies);
  const cpuSec = (cpu.user + cpu.system) / 1e6;
  /** A gateway media counter's change over the window. */
  const media = (k: string): number => (usage1.media?.[k] ?? 0) - (usage0.media?.[k] ?? 0);
  for (const s of live) await s.dialog?.bye('bench_done');
  for (const s of states) {
    s.ws.close();
    s.peer.close();
    s.peerRtcp.close();
  }
  return {
    calls,
    connected: live.length,
    seconds: Math.round(elapsed * 10) / 10,
    framesSent,
    framesToSocket,
    lossInPercent: pct(socketShort, framesSent),
    rtpOutExpected: framesSent,
    rtpOutReceived,
    lossOutPercent: pct(rtpShort, framesSent),
    burstsSent,
    burstsDelivered: latencies.length,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    cpuPercentOfOneCore: Math.round((cpuSec / elapsed) * 100),
    loadGeneratorCpuPercent: Math.round(((genCpu.user + genCpu.system) / 1e6 / elapsed) * 100),
    gatewayClockLateTicks: usage1.media?.clockLateTicks,
    gatewayDiscardPercent: pct(audioDiscarded(media), media('packetsIn')),
    gatewayConcealPercent: pct(media('concealed'), media('packetsIn')),
    gatewayLoopDelayP99Ms: usage1.media?.loopDelayP99Ms,
    cpuMsPerCallSecond: Math.round(((cpuSec * 1000) / (elapsed * Math.max(1, live.length))) * 100) / 100,
    rssMbPerCall: Math.round(((rss - rss0) / 1e6 / Math.max(1, live.length)) * 100) / 100,
  };
}

export async function measureConcurrent(o: { callCounts?: number[]; seconds: number }): Promise<ConcurrentResult[]> {
  const counts = o.callCounts ?? [1, 20, 50, 200, 400];
  const child = fork(fileURLToPath(new URL('./gateway-child.ts', import.meta.url)), [], {
    execArgv: [
      '--import',
      'tsx',
      ...nodeHeapFlags(),
      ...(process.env.SIP_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SIP_BENCH_PROFILE}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ sipPort: number }>((resolve) => child.once('message', (m) => resolve(m as { sipPort: number })));
  const ua = await UserAgent.start(
    { host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1' },
    { onInvite: (inv) => inv.reject(603, 'Decline') },
  );
  const results: ConcurrentResult[] = [];
  try {
    for (const calls of counts) {
      const r = await runOnce(child, ready.sipPort, ua, calls, o.seconds);
      results.push(r);
      console.log(
        `concurrent ${r.connected}/${calls} calls: bursts ${r.burstsDelivered}/${r.burstsSent}, gateway discarded ${r.gatewayDiscardPercent}% concealed ${r.gatewayConcealPercent}%, socket frames short ${r.lossInPercent}%, RTP out short ${r.lossOutPercent}%, loop delay p99 ${r.gatewayLoopDelayP99Ms} ms, latency p50 ${r.latencyP50Ms} ms p99 ${r.latencyP99Ms} ms, gateway CPU ${r.cpuPercentOfOneCore}% of a core (${r.cpuMsPerCallSecond} ms CPU per call-second), RSS +${r.rssMbPerCall} MB/call; load generator CPU ${r.loadGeneratorCpuPercent}%, gateway clock late ticks ${r.gatewayClockLateTicks}`,
      );
      for (let i = 0; i < 200; i++) {
        const u = await ask<Usage>(child, { cmd: 'usage' });
        if (u.activeCalls === 0) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      // Every step runs (the flat line is the point); stop only when calls no longer connect.
      if (r.connected < calls) break;
    }
  } finally {
    ua.close();
    const exited = new Promise((res) => child.once('exit', res));
    child.send({ cmd: 'stop' });
    const t = setTimeout(() => child.kill('SIGKILL'), 15000);
    await exited;
    clearTimeout(t);
  }
  // The flat line in one table: added latency per call count, and the most calls carried at < 0.1 % loss.
  console.log('calls  p50_ms  p99_ms  loss_in_%  loss_out_%  cpu_ms/call-s  rss_MB/call');
  for (const r of results)
    console.log(
      `${String(r.calls).padStart(5)}  ${String(r.latencyP50Ms).padStart(6)}  ${String(r.latencyP99Ms).padStart(6)}  ${String(r.lossInPercent).padStart(9)}  ${String(r.lossOutPercent).padStart(10)}  ${String(r.cpuMsPerCallSecond).padStart(13)}  ${String(r.rssMbPerCall).padStart(11)}`,
    );
  const clean = results.filter((r) => r.lossInPercent < 0.1 && r.lossOutPercent < 0.1 && r.connected === r.calls).map((r) => r.calls);
  console.log(`most calls carried at < 0.1 % loss both ways: ${clean.length ? Math.max(...clean) : 'none of the steps'}`);
  return results;
}
