// Hostile input while calls are live: N (default 100) bridged SIP calls stream PCMA at 20 ms both ways
// (each session has a socket consumer), while a separate process (hostile-sender.ts) sends hostile
// datagrams and TCP garbage to the SIP port at rising rates. Per step: loss into the gateway (RTP
// not received, or discarded late by the jitter buffers), loss out (RTP the phones did not get),
// concealment, the gateway's event-loop delay and CPU, and what the front refused. The figure is the
// largest hostile rate at which both losses stay under 0.1 %. Prints figures; asserts nothing.
import type dgram from 'node:dgram';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { UserAgent } from '../../src/telephony/sip/user-agent.js';
import type { Dialog } from '../../src/telephony/sip/dialog.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import { loopbackPhoneSdp } from './phone-sdp.js';
import { bindLoopbackUdp, bindPhonePorts } from './phone-ports.js';
import { serializeRtp, parseRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode } from '../../src/media/g711.js';
import type { GcPause, Stall } from './loop-probe.js';
import { nodeHeapFlags } from '../node-heap-flags.js';
import { audioDiscarded } from '../gateway-discards.js';

export interface HostileStep {
  /** Hostile messages per second asked of the sender, and what it managed. */
  rate: number;
  sentPerSecond: number;
  refusedPerSecond: number;
  seconds: number;
  rtpSent: number;
  lossInPercent: number;
  jitterDiscardPercent: number;
  concealPercent: number;
  lossOutPercent: number;
  socketFramesShortPercent: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  gatewayCpuPercent: number;
}

interface Usage {
  cpu: NodeJS.CpuUsage;
  media: Record<string, number>;
  refused: Record<string, number>;
  activeCalls: number;
  probe: { stalls: Stall[]; gcs: GcPause[]; nowMs: number };
}

// With a CPU profile of the child, each stall also gets its monotonic time: the profile's clock.
const withMono = (process.env.SIP_BENCH_CHILD_NODE_ARGS ?? '').includes('--cpu-prof');

/**
 * Stalls and GC pauses since the last usage, with their times relative to `phaseStartMs` (child
 * clock). A stall whose CPU is far below its length is the machine not running the gateway; one
 * whose CPU is about its length is the gateway's own work (or GC).
 */
function reportProbe(phase: string, u: Usage, phaseStartMs: number): void {
  const rel = (at: number) => `+${((at - phaseStartMs) / 1000).toFixed(2)}s`;
  const longGc = u.probe.gcs.filter((g) => g.ms >= 20);
  const gcMs = u.probe.gcs.reduce((a, g) => a + g.ms, 0);
  console.log(
    `  ${phase}: ${u.probe.stalls.length} stall(s) > 50 ms${u.probe.stalls.map((x) => ` [${rel(x.atMs)} ${x.lateMs} ms, CPU ${x.cpuMs} ms of ${x.overMs}${withMono ? ` @${x.hrUs}µs` : ''}]`).join('')}; ` +
      `GC pauses ≥ 5 ms: ${u.probe.gcs.length} (${gcMs} ms)${longGc.map((g) => ` [${rel(g.atMs)} ${g.kind} ${g.ms} ms]`).join('')}`,
  );
}

interface Call {
  ws: WebSocket;
  peer: dgram.Socket;
  /** Holds the phone's RTCP port (phone-ports.ts). */
  peerRtcp: dgram.Socket;
  dialog: Dialog | null;
  gwPort: number;
  seq: number;
  rtpIn: number;
  socketFrames: number;
}

const FRAME = alawEncode(Int16Array.from({ length: 160 }, (_, i) => Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 8000))));
const pct = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0);

function ask<T>(child: ChildProcess, msg: object): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(msg);
  });
}

interface SenderResult {
  udp: number;
  tcp: number;
  seconds: number;
}

/** Starts the hostile sender; resolves once it is loaded, with `go()` that starts it and resolves with what it sent. */
async function startSender(port: number, rate: number, seconds: number): Promise<{ go(): Promise<SenderResult> }> {
  const child = fork(fileURLToPath(new URL('./hostile-sender.ts', import.meta.url)), [String(port), String(rate), String(seconds)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise((resolve) => child.once('message', resolve));
  return {
    go: () =>
      new Promise((resolve, reject) => {
        child.once('message', (m) => resolve(m as SenderResult));
        child.once('exit', (code) => reject(new Error(`hostile sender exited ${code} without a result`)));
        child.send({ go: true });
      }),
  };
}

const sumRefused = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

export async function measureHostileLive(
  o: { calls?: number; rates?: number[]; seconds?: number } = {},
): Promise<{ best: number | null; steps: HostileStep[] }> {
  const callCount = o.calls ?? 100;
  const rates = o.rates ?? [0, 250, 500, 1000, 2000, 4000, 8000];
  const seconds = o.seconds ?? 10;
  // SIP_BENCH_CHILD_NODE_ARGS: extra node flags for the gateway child (e.g. "--trace-gc", "--cpu-prof").
  const childArgs = (process.env.SIP_BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // The gateway child with SIP over UDP and TCP, RTP ports of its own, and refusals not logged.
  const child = fork(fileURLToPath(new URL('./gateway-child.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx', ...nodeHeapFlags(), ...childArgs],
    env: { ...process.env, BENCH_GATEWAY_TRANSPORTS: 'udp,tcp', BENCH_GATEWAY_RTP_BASE: '40000', BENCH_GATEWAY_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { sipPort } = await new Promise<{ sipPort: number }>((resolve) => child.once('message', (m) => resolve(m as { sipPort: number })));
  const ua = await UserAgent.start(
    { host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1' },
    { onInvite: (inv) => inv.reject(603, 'Decline') },
  );
  const steps: HostileStep[] = [];
  const calls: Call[] = [];
  let sending: NodeJS.Timeout | null = null;
  try {
    const uStart = await ask<Usage>(child, { cmd: 'usage' });
    reportProbe('gateway start-up', uStart, 0);
    const { sessions } = await ask<{ sessions: { number: string; wsUrl: string }[] }>(child, { cmd: 'prepare', calls: callCount });
    for (const [i, s] of sessions.entries()) {
      const ws = new WebSocket(s.wsUrl);
      await new Promise((res, rej) => {
        ws.once('open', res);
        ws.once('error', rej);
      });
      const { rtp: peer, rtcp: peerRtcp } = await bindPhonePorts(bindLoopbackUdp);
      const call: Call = { ws, peer, peerRtcp, dialog: null, gwPort: 0, seq: 0, rtpIn: 0, socketFrames: 0 };
      ws.on('message', (raw) => {
        if (raw.toString().startsWith('{"type":"audio.output"')) call.socketFrames++;
      });
      peer.on('message', (m) => {
        if (parseRtp(m)) call.rtpIn++;
      });
      const offer = loopbackPhoneSdp(peer.address().port, String(i));
      call.dialog = await ua.call(`sip:${s.number}@127.0.0.1:${sipPort}`, { from: 'sip:+15550000000@127.0.0.1', sdp: offer, ringTimeoutMs: 30000 });
      call.gwPort = parseSdp(call.dialog.remoteSdp ?? '').audio?.port ?? 0;
      calls.push(call);
    }
    const live = calls.filter((c) => c.gwPort > 0);
    console.log(`hostile-live: ${live.length}/${callCount} calls connected`);
    const uSetup = await ask<Usage>(child, { cmd: 'usage' });
    reportProbe('sessions and calls set up', uSetup, uStart.probe.nowMs);
    // One drift-free sender for all calls: every 20 ms tick is due by the wall clock.
    const t0 = performance.now();
    let tick = 0;
    let rtpSent = 0;
    sending = setInterval(() => {
      const due = Math.floor((performance.now() - t0) / 20);
      for (; tick < due; tick++) {
        for (const c of live) {
          c.peer.send(
            serializeRtp({ marker: c.seq === 0, payloadType: 8, sequence: c.seq & 0xffff, timestamp: (c.seq * 160) >>> 0, ssrc: 4321, payload: FRAME }),
            c.gwPort,
            '127.0.0.1',
          );
          c.seq++;
          rtpSent++;
        }
      }
    }, 5);
    // Warm-up: jitter buffers settle before the first measured step. 3 s was too short on a quiet
    // machine: the no-hostile step still carried the set-up transient of 100 calls (0.39 % discards).
    await new Promise((r) => setTimeout(r, 10_000));
    const uWarm = await ask<Usage>(child, { cmd: 'usage' });
    reportProbe('warm-up (10 s, RTP flowing)', uWarm, uSetup.probe.nowMs);
    let stepStart = uWarm.probe.nowMs;
    for (const rate of rates) {
      const hostile = rate > 0 ? await startSender(sipPort, rate, seconds) : null;
      const u0 = await ask<Usage>(child, { cmd: 'usage' });
      if (u0.probe.stalls.length > 0) reportProbe(`before step ${rate}/s (sender start-up)`, u0, stepStart);
      stepStart = u0.probe.nowMs;
      const sent0 = rtpSent;
      const in0 = live.reduce((a, c) => a + c.rtpIn, 0);
      const sock0 = live.reduce((a, c) => a + c.socketFrames, 0);
      const w0 = performance.now();
      const sender = hostile ? await hostile.go() : await new Promise<SenderResult>((r) => setTimeout(() => r({ udp: 0, tcp: 0, seconds }), seconds * 1000));
      // In-flight packets land before the window closes.
      await new Promise((r) => setTimeout(r, 300));
      const elapsed = (performance.now() - w0) / 1000;
      const u1 = await ask<Usage>(child, { cmd: 'usage' });
      const sent = rtpSent - sent0;
      const d = (k: string): number => (u1.media[k] ?? 0) - (u0.media[k] ?? 0);
      const packetsIn = d('packetsIn');
      const discarded = audioDiscarded(d);
      const rtpOut = live.reduce((a, c) => a + c.rtpIn, 0) - in0;
      const expectedOut = Math.round(elapsed * 50) * live.length;
      const socketFrames = live.reduce((a, c) => a + c.socketFrames, 0) - sock0;
      const cpu = (u1.cpu.user - u0.cpu.user + u1.cpu.system - u0.cpu.system) / 1e6;
      const step: HostileStep = {
        rate,
        sentPerSecond: Math.round((sender.udp + sender.tcp) / sender.seconds),
        refusedPerSecond: Math.round((sumRefused(u1.refused) - sumRefused(u0.refused)) / elapsed),
        seconds: Math.round(elapsed * 10) / 10,
        rtpSent: sent,
        // Not received at all, plus received but discarded by the jitter buffers (too late to play).
        lossInPercent: Math.round((Math.max(0, pct(sent - packetsIn, sent)) + pct(discarded, packetsIn)) * 100) / 100,
        jitterDiscardPercent: pct(discarded, packetsIn),
        concealPercent: pct(d('concealed'), packetsIn),
        lossOutPercent: Math.max(0, pct(expectedOut - rtpOut, expectedOut)),
        socketFramesShortPercent: Math.max(0, pct(sent - socketFrames, sent)),
        loopDelayP99Ms: u1.media.loopDelayP99Ms ?? 0,
        loopDelayMaxMs: u1.media.loopDelayMaxMs ?? 0,
        gatewayCpuPercent: Math.round((cpu / elapsed) * 100),
      };
      steps.push(step);
      console.log(
        `hostile ${rate}/s asked, ${step.sentPerSecond}/s sent, ${step.refusedPerSecond}/s refused: loss in ${step.lossInPercent}% (jitter discards ${step.jitterDiscardPercent}%, concealed ${step.concealPercent}%), loss out ${step.lossOutPercent}%, socket frames short ${step.socketFramesShortPercent}%, loop delay p99 ${step.loopDelayP99Ms} ms max ${step.loopDelayMaxMs} ms, gateway CPU ${step.gatewayCpuPercent}%`,
      );
      reportProbe(`step ${rate}/s`, u1, stepStart);
    }
  } finally {
    if (sending) clearInterval(sending);
    for (const c of calls) await c.dialog?.bye('bench_done').catch(() => {});
    for (const c of calls) {
      c.ws.close();
      c.peer.close();
      c.peerRtcp.close();
    }
    ua.close();
    const exited = new Promise((res) => child.once('exit', res));
    child.send({ cmd: 'stop' });
    const t = setTimeout(() => child.kill('SIGKILL'), 15000);
    await exited;
    clearTimeout(t);
  }
  // The rising rates until the first step over 0.1 % either way (a later lucky step does not count).
  const firstBad = steps.findIndex((s) => s.lossInPercent >= 0.1 || s.lossOutPercent >= 0.1);
  const clean = firstBad < 0 ? steps : steps.slice(0, firstBad);
  const best = clean.length ? (clean[clean.length - 1]?.rate ?? null) : null;
  console.log(`largest hostile rate with < 0.1 % loss both ways on ${callCount} live calls: ${best === null ? 'none of the steps' : `${best}/s`}`);
  return { best, steps };
}
