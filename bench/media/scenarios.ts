// The media-path latency scenarios, one gateway child process for all of them.
// Every call is an assistive-translation session (engines off, so the media path itself is
// measured); the customer's audio is bridged to the agent. Where the customer and the agent are:
//   rtp_to_socket         customer = a phone (inbound SIP call, RTP in), agent = the socket (audio.output)
//   socket_to_rtp         customer = the socket (audio.input, one 20 ms frame per message),
//                         agent = a phone leg the gateway dials out (RTP out)
//   socket_chunks_to_rtp  as socket_to_rtp, but the socket sends 100–200 ms chunks (SPEC's advice;
//                         each call keeps one chunk size, as a client with a fixed buffer does)
//   rtp_to_rtp            customer = an inbound phone, agent = a dialled phone: two legs through one session
// Latency: loud tone frames are sent among quiet ones; a loud frame's arrival at the sink minus
// its send time is the added latency. A chunk's loud frame is its first, so the figure is measured
// from the chunk's arrival (the gateway cannot play audio before it has it).
// Phones on both ends send RTP at 20 ms both ways, on a drift-free 20 ms grid.
// The load generator is this process; the gateway is a child (bench/sip/gateway-child.ts), whose
// CPU and memory are the ones reported. With several nodes (startBenchNodes) each is a child of its own,
// as several voxbridge processes on one host behind the edge's dispatcher: call i goes to node i mod N
// (the dispatcher's round robin; the load generator signals each node directly, so the edge's own
// SIP work is not counted: it carries no media), and the figures are the nodes' together.
import dgram from 'node:dgram';
import WebSocket from 'ws';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { UserAgent } from '../../src/telephony/sip/user-agent.js';
import type { Dialog } from '../../src/telephony/sip/dialog.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import { loopbackPhoneSdp } from '../sip/phone-sdp.js';
import { bindPhonePorts } from '../sip/phone-ports.js';
import { nodeHeapFlags } from '../node-heap-flags.js';
import { serializeRtp, parseRtp } from '../../src/telephony/rtp/packet.js';
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from '../../src/media/g711.js';
import { literalLookup } from '../../src/telephony/rtp/literal-lookup.js';
import { MediaClock } from '../../src/media/index.js';
import { NativeRtpIo, nativeRtpIoAddon } from '../../src/telephony/rtp/native-io.js';
import type { MediaSocket } from '../../src/telephony/rtp/socket-protocol.js';
import { LoopProbe, benchStallMs } from '../sip/loop-probe.js';
import { SinkFrames, framesShort } from '../sink-frames.js';
import { audioDiscarded } from '../gateway-discards.js';
import { hostCpu, hostShares } from '../host-cpu.js';

export type Scenario = 'rtp_to_socket' | 'socket_to_rtp' | 'socket_chunks_to_rtp' | 'rtp_to_rtp';
export const SCENARIOS: Scenario[] = ['rtp_to_socket', 'socket_to_rtp', 'rtp_to_rtp', 'socket_chunks_to_rtp'];

export interface StepResult {
  scenario: Scenario;
  calls: number;
  /** Gateway processes the calls were dealt to (see startBenchNodes). */
  nodes: number;
  connected: number;
  seconds: number;
  /** Frames the sink should have received (one per 20 ms per call). */
  framesExpected: number;
  framesAtSink: number;
  /**
   * Sink short of frames (socket frames or RTP packets), percent: the frames missing between each call's
   * first and last in the window (RTP sequence gaps, `timestamp_ms` gaps), or what the window's length says
   * beyond one frame per call (a sink that stopped early), whichever is more.
   */
  sinkShortPercent: number;
  burstsSent: number;
  burstsDelivered: number;
  burstLossPercent: number;
  /**
   * Frames the gateway's jitter buffers discarded (drift drops, bursts cut back, late), over packets
   * received; not the quiet frames they took out of pauses (gatewaySilenceTrimmedPercent).
   */
  gatewayDiscardPercent: number;
  /** Quiet or missing frames the jitter buffers took out of pauses to shorten a standing depth: no audio lost. */
  gatewaySilenceTrimmedPercent: number;
  /**
   * Frames the gateway's jitter buffers made up (no packet in time: a repeated, faded frame) over frames
   * played, in the window. Not loss (the packet still plays, later), but a glitch the listener hears.
   */
  gatewayConcealedPercent: number;
  /** The gateway's media-clock runs that started a frame late (what MEDIA_OVERLOAD_LATE_PERCENT reads). */
  clockLatePercent: number;
  /**
   * Ticks the session pacers' live queues found empty while their producer was sending (a late frame: the
   * leg repeats the frame before it, faded, in its place), over the frames expected. Not loss either, but heard.
   */
  pacerGapPercent: number;
  /** The step's loss figure: the worst of sink short, bursts missed and gateway discards. */
  lossPercent: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  /** p99 of the warm-up seconds: how the calls' start-up bursts converge (not in the figures above). */
  startupP99Ms: number;
  gatewayCpuPercentOfOneCore: number;
  /** The main thread (the event loop that carries the media) of the busiest node, where Linux tells. */
  gatewayMainThreadPercent: number | null;
  /** The RTP addon's send thread of the busiest node (MEDIA_IO=native: the kernel's UDP sends, nearly all of it). */
  gatewaySendThreadPercent: number | null;
  /** Its receive thread (MEDIA_IO_RECV_THREAD=true; 0 without). */
  gatewayRecvThreadPercent: number | null;
  cpuMsPerCallSecond: number;
  rssMbPerCall: number;
  heapMbPerCall: number;
  loadGeneratorCpuPercent: number;
  gatewayLoopDelayP99Ms?: number;
  /** The gateway's collections in the window: bytes its scavenges moved to old space per call-second, and its mark-compacts (gc-totals.ts). */
  gcPromotedKbPerCallSecond: number;
  gcMarkCompacts: number;
  gcMarkCompactMs: number;
  /** Shares of the host's CPU time (every core) in the window that were busy, any process's, and that the hypervisor took (host-cpu.ts). */
  hostBusyPercent: number;
  hostStealPercent: number;
}

const FRAME = 160;
const tone = (amp: number): Int16Array => {
  const f = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) f[i] = Math.round(amp * Math.sin((2 * Math.PI * 1000 * i) / 8000));
  return f;
};
const LOUD_PCM = tone(12000);
const QUIET_PCM = new Int16Array(FRAME).fill(8);
const LOUD = { alaw: Buffer.from(alawEncode(LOUD_PCM)), mulaw: Buffer.from(mulawEncode(LOUD_PCM)) };
const QUIET = { alaw: Buffer.from(alawEncode(QUIET_PCM)), mulaw: Buffer.from(mulawEncode(QUIET_PCM)) };
const BURST_EVERY = 25;
/**
 * Ticks sent before the measured window: 3 s by default (BENCH_WARMUP_SECONDS). Calls that all start
 * in the same tick make a burst that every call's queues need 1-2 s to shed; the latency of those
 * first seconds is reported apart (`startupP99Ms`) instead of mixed into the steady figure.
 */
const WARMUP_TICKS = Math.round(Number(process.env.BENCH_WARMUP_SECONDS ?? 3) * 50);
const LOUD_PEAK = 6000;
/** BENCH_STAGES=1: the per-stage, per-call and stall details besides the figures. */
const STAGES = !!process.env.BENCH_STAGES;
/**
 * BENCH_HANGUP_HALF=1: half of the calls (every odd one) hang up together halfway through the window:
 * BYE on each leg and the socket closed, as when a trunk or a campaign drops them at once. The step's
 * figures are the other half's (their latency around that moment is in the BENCH_STAGES timeline).
 * With BENCH_GATEWAY_GRACE_SECONDS short, the sessions' ends land in the window too.
 */
const HANGUP_HALF = !!process.env.BENCH_HANGUP_HALF;
/**
 * Which tick of the 25 carries a call's loud frame. Spread (default): call i sends its marker in tick
 * i mod 25, so a step's samples are taken at 25 instants per half second, and a loop stall delays the
 * markers that fall in it, as it would a conversation's words. BENCH_MARKERS=lockstep: every call in
 * the same tick (the fifteenth and earlier passes): one stall that lands on it delays every call's
 * sample at once, so p99 is then the worst of the window's 20 marker instants. The packets sent are
 * the same either way (every call sends a frame every tick); only which frame is loud differs.
 */
const MARKERS_LOCKSTEP = process.env.BENCH_MARKERS === 'lockstep';
/**
 * BENCH_RAMP_CALLS_PER_SECOND=N: the calls join one by one at N per second while the ones up already
 * send media (all of them are otherwise set up before any sends), as calls reach a node in service; the
 * warm-up starts once the last call is set up or refused. With MEDIA_OVERLOAD_LATE_PERCENT, shows how
 * many calls a node takes before its media clock runs late, and how those calls fare.
 */
const RAMP_CALLS_PER_SECOND = Number(process.env.BENCH_RAMP_CALLS_PER_SECOND ?? 0);

const pct = (a: number, b: number): number => (b > 0 ? Math.round((a / b) * 10000) / 100 : 0);
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN) * 10) / 10;
}
const peakOf = (pcm: Int16Array): number => {
  let peak = 0;
  for (let k = 0; k < pcm.length; k++) peak = Math.max(peak, Math.abs(pcm[k] ?? 0));
  return peak;
};

interface Usage {
  stages?: Record<string, { count: number; meanMs: number; p50Ms: number; p99Ms: number }>;
  media?: Record<string, number>;
  cpu: NodeJS.CpuUsage;
  /** The main thread's share of `cpu` (null where the OS does not tell). */
  mainThreadCpuUs?: number | null;
  /** The RTP addon's send and receive threads' shares (0 without them). */
  sendThreadCpuUs?: number | null;
  recvThreadCpuUs?: number | null;
  rss: number;
  heapUsed?: number;
  activeCalls: number;
  probe?: ReturnType<LoopProbe['take']>;
}

/** One call's both ends, as the load generator sees them. */
interface CallEnds {
  sessionId: string;
  ws: WebSocket;
  wsSeq: number;
  customer: MediaSocket | null;
  customerDialog: Dialog | null;
  customerGwPort: number;
  customerSeq: number;
  agent: MediaSocket | null;
  agentDialog: Dialog | null;
  agentGw: { address: string; port: number } | null;
  agentSeq: number;
  /** Socket chunking: frames gathered for the next chunk, and its size in frames (5–10: 100–200 ms, fixed per call, as a client's buffer). */
  chunk: Buffer[];
  chunkFrames: number;
  /** The tick (mod BURST_EVERY) of this call's loud frame. */
  markerPhase: number;
  chunksSent: number;
  lastLoudSentAt: number;
  awaitingLoud: boolean;
  latencies: number[];
  /** performance.now() of each latency sample's loud send (to place the tail in time). */
  latencySentAt: number[];
  /** The sink's frames in the window, by position (RTP sequence, `timestamp_ms` / 20). */
  sink: SinkFrames;
  burstsSent: number;
  /** Socket messages the client received, by type (what the gateway spends socket writes on). */
  wsTypes: Record<string, number>;
}

/** A queue of child replies: requests are sequential, each takes the next message. */
class ChildLink {
  private waiting: ((m: unknown) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    child.on('message', (m) => this.waiting.shift()?.(m));
  }
  ask<T>(msg: object): Promise<T> {
    return new Promise((resolve) => {
      this.waiting.push((m) => resolve(m as T));
      this.child.send(msg);
    });
  }
}

export interface BenchGateway {
  link: ChildLink;
  sipPort: number;
  ua: UserAgent;
  /** Agent legs the gateway dials in, answered by the call's agent socket. */
  pendingAgents: Map<string, CallEnds>;
  stop(): Promise<void>;
}

/**
 * N gateway nodes on this host, each its own process with its own database schema and a share of the RTP
 * ports below the ephemeral range the phones bind in (one node keeps 20000–29998, as before).
 */
export async function startBenchNodes(count: number): Promise<BenchGateway[]> {
  if (count === 1) return [await startBenchGateway({})];
  const span = Math.floor(20000 / count / 2) * 2;
  return Promise.all(
    Array.from({ length: count }, (_, i) => startBenchGateway({ BENCH_GATEWAY_RTP_BASE: String(10000 + i * span), BENCH_GATEWAY_RTP_PORTS: String(span - 1) })),
  );
}

export async function startBenchGateway(env: Record<string, string>): Promise<BenchGateway> {
  const profileDir = process.env.SIP_BENCH_PROFILE;
  const child = fork(fileURLToPath(new URL('../sip/gateway-child.ts', import.meta.url)), [], {
    env: { ...process.env, ...env },
    // SIP_BENCH_CHILD_NODE_ARGS: extra node flags for the gateway child (e.g. "--trace-gc"), as in hostile-live.ts.
    execArgv: [
      '--import',
      'tsx',
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      // As the gateway starts in production (scripts/run.sh, the image): HEAP_SEMI_SPACE_MB, default 32.
      ...nodeHeapFlags(),
      ...(process.env.SIP_BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ sipPort: number }>((resolve) => child.once('message', (m) => resolve(m as { sipPort: number })));
  const link = new ChildLink(child);
  const pendingAgents = new Map<string, CallEnds>();
  const ua = await UserAgent.start(
    { host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1' },
    {
      onInvite: (inv) => {
        const user = /sip:([^@]+)@/.exec(typeof inv.req.uri === 'string' ? inv.req.uri : '')?.[1] ?? '';
        const call = pendingAgents.get(user);
        const offer = inv.req.content ? parseSdp(String(inv.req.content)) : null;
        if (!call?.agent || !offer?.audio) {
          inv.reject(404, 'Not Found');
          return;
        }
        pendingAgents.delete(user);
        call.agentGw = { address: offer.audio.address, port: offer.audio.port };
        const answer = loopbackPhoneSdp(call.agent.address().port, user, 'PCMU');
        call.agentDialog = inv.answer(answer);
      },
    },
  );
  return {
    link,
    sipPort: ready.sipPort,
    ua,
    pendingAgents,
    async stop() {
      ua.close();
      const exited = new Promise((res) => child.once('exit', res));
      child.send({ cmd: 'stop' });
      // A CPU profile is written at exit: on a busy host shutting down 1,000 calls can take a while.
      const t = setTimeout(() => child.kill('SIGKILL'), profileDir ? 120_000 : 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

const customerIsPhone = (s: Scenario): boolean => s === 'rtp_to_socket' || s === 'rtp_to_rtp';
const agentIsPhone = (s: Scenario): boolean => s !== 'rtp_to_socket';

/**
 * BENCH_PHONES_IO=native: the phones' sockets are read once per 20 ms tick of their own clock through the
 * gateway's batched addon (rtp/native-io.ts), so the load generator takes less of the CPU it shares with
 * the gateway; a frame's arrival is then the kernel's timestamp, not when the generator's loop got to it.
 */
const phoneIo = process.env.BENCH_PHONES_IO === 'native' ? new NativeRtpIo(nativeRtpIoAddon(), new MediaClock()) : null;
/**
 * The batched phones' sockets connected to the gateway's (see NativeSocket.connectTo), as the gateway's
 * are to theirs: the load generator's sends then skip a route lookup each. BENCH_PHONES_CONNECT=0: not
 * (the figures of passes before the twenty-sixth).
 */
const PHONES_CONNECT = process.env.BENCH_PHONES_CONNECT !== '0';
/**
 * With batched phones, every scenario's phones (the agent's too in the socket scenarios, since the
 * thirty-eighth pass; see SOCKET_CALLS_LOCKSTEP): the packets are queued BENCH_PHONES_LEAD_TICKS 20 ms ticks ahead (default 2) and the addon's send
 * thread holds each tick's batch until the tick's time (NativeRtpIo.sendNotBefore). A stall of the load
 * generator's event loop shorter than that then no longer makes every call's frame late at once, which
 * no set of independent phones does; the gateway's jitter buffers grew on those (BENCHMARKS.md,
 * thirty-second pass). At most 2 (the send thread holds sixteen held batches: three ticks of four phases).
 * 0: the packets leave when the loop gets to them (the passes before the thirty-third).
 */
const PHONES_LEAD_TICKS = phoneIo ? Math.max(0, Math.min(2, Math.floor(Number(process.env.BENCH_PHONES_LEAD_TICKS ?? 2)))) : 0;
/**
 * BENCH_PHONES_PHASES=N (4 by default, or 2 or 1; batched phones): call i's phones and socket client send
 * (i mod 25) mod N × 20/N ms into each 20 ms frame, as independent phones' and clients' phases spread over
 * the frame. With one phase (every
 * pass before the thirty-third) every call's packet arrives at the same point of the gateway's tick, a
 * point each run draws at random: the wait for the next tick is then the same for every call and differs
 * from run to run (the median call's latency at 400 calls moved 15–33 ms between runs); with four, every
 * run covers every phase (BENCH_STAGES prints the latency of each). Each phase is a batch of its own for
 * the send thread.
 */
const PHONES_PHASES = phoneIo ? ([1, 2, 4].find((n) => n === Number(process.env.BENCH_PHONES_PHASES ?? 4)) ?? 4) : 1;
/**
 * BENCH_SOCKET_CALLS_LOCKSTEP=1: in the socket scenarios, every call's socket frame and its agent phone's
 * packet leave together from the load generator's loop at each tick, with its lateness, as in every pass
 * before the thirty-eighth: 400 clients' frames in one burst and phones whose jitter is the generator's
 * (the gateway's legs then moved their playout about six times a second each).
 */
const SOCKET_CALLS_LOCKSTEP = process.env.BENCH_SOCKET_CALLS_LOCKSTEP === '1';

/** Each phone's RTCP port (its RTP port + 1), held while the phone lives (phone-ports.ts). */
const rtcpPorts = new Map<MediaSocket, dgram.Socket>();

async function udp(): Promise<MediaSocket> {
  const { rtp, rtcp } = await bindPhonePorts(rtpSocket);
  rtcpPorts.set(rtp, rtcp);
  return rtp;
}

function closePhone(sock: MediaSocket | null | undefined): void {
  if (!sock) return;
  sock.close();
  rtcpPorts.get(sock)?.close();
  rtcpPorts.delete(sock);
}

async function rtpSocket(): Promise<MediaSocket> {
  if (phoneIo) {
    const sock = phoneIo.bind('127.0.0.1', 0);
    if (!sock) throw new Error('phone: no free port');
    return sock;
  }
  // The phones send to IP literals: the same immediate lookup as the gateway's media sockets, so the
  // load generator does not spend a deferred send per packet of the CPU it shares with the gateway.
  const sock = dgram.createSocket({ type: 'udp4', lookup: literalLookup() });
  await new Promise<void>((res) => sock.bind(0, '127.0.0.1', () => res()));
  return sock;
}

/** A frame at the sink (noted in `c.sink` by the caller): when a loud frame is awaited, measures its latency (to `arrivedAt`, default now). */
function atSink(c: CallEnds, pcm: () => Int16Array, arrivedAt?: number): void {
  if (!c.awaitingLoud) return;
  if (peakOf(pcm()) > LOUD_PEAK) {
    c.latencies.push((arrivedAt ?? performance.now()) - c.lastLoudSentAt);
    c.latencySentAt.push(c.lastLoudSentAt);
    c.awaitingLoud = false;
  }
}

/** Sets up call i's ends; one that fails (refused, say) is taken down again: nothing of it stays open. */
async function connectCall(gw: BenchGateway, scenario: Scenario, i: number, s: { number: string; id: string; wsUrl: string }): Promise<CallEnds> {
  const c = newCallEnds(s, i);
  try {
    await setUpCall(gw, scenario, i, s, c);
    return c;
  } catch (err) {
    void hangUp(c);
    throw err;
  }
}

function newCallEnds(s: { id: string; wsUrl: string }, i: number): CallEnds {
  return {
    sessionId: s.id,
    ws: new WebSocket(s.wsUrl),
    wsSeq: 0,
    customer: null,
    customerDialog: null,
    customerGwPort: 0,
    customerSeq: 0,
    agent: null,
    agentDialog: null,
    agentGw: null,
    agentSeq: 0,
    chunk: [],
    chunkFrames: 5 + (i % 6),
    markerPhase: MARKERS_LOCKSTEP ? 0 : i % BURST_EVERY,
    chunksSent: 0,
    lastLoudSentAt: 0,
    awaitingLoud: false,
    latencies: [],
    latencySentAt: [],
    sink: new SinkFrames(),
    burstsSent: 0,
    wsTypes: {},
  };
}

async function setUpCall(gw: BenchGateway, scenario: Scenario, i: number, s: { number: string; id: string }, c: CallEnds): Promise<void> {
  const ws = c.ws;
  // A node turning new sessions away closes the socket 1013 media_overloaded right after the upgrade
  // (session.ready only comes with the first audio): the call counts as not set up.
  let refused: string | null = null;
  ws.once('close', (code, reason) => (refused ??= `stream closed ${code} ${reason.toString()}`));
  await new Promise((res, rej) => {
    ws.once('open', res);
    ws.once('error', rej);
  });
  ws.on('message', (raw) => {
    const type = /^\{"type":"([^"]+)"/.exec(raw.toString().slice(0, 40))?.[1] ?? 'other';
    c.wsTypes[type] = (c.wsTypes[type] ?? 0) + 1;
    if (type === 'session.error' && STAGES) console.log(raw.toString().slice(0, 300));
  });
  if (scenario === 'rtp_to_socket') {
    ws.on('message', (raw) => {
      const text = raw.toString();
      if (!text.startsWith('{"type":"audio.output"')) return;
      c.sink.noteTimestampMs(Number(/"timestamp_ms":(\d+)/.exec(text)?.[1]));
      atSink(c, () => mulawDecode(Buffer.from(/"payload":"([^"]+)"/.exec(text)?.[1] ?? '', 'base64')));
    });
  }
  if (customerIsPhone(scenario)) {
    c.customer = await udp();
    const offer = loopbackPhoneSdp(c.customer.address().port, String(i));
    c.customerDialog = await gw.ua.call(`sip:${s.number}@127.0.0.1:${gw.sipPort}`, { from: 'sip:+15550000000@127.0.0.1', sdp: offer, ringTimeoutMs: 30000 });
    c.customerGwPort = parseSdp(c.customerDialog.remoteSdp ?? '').audio?.port ?? 0;
    if (PHONES_CONNECT) c.customer.connectTo?.({ address: '127.0.0.1', port: c.customerGwPort });
  }
  if (agentIsPhone(scenario)) {
    const agent = await udp();
    c.agent = agent;
    agent.on('message', (m, from) => {
      const p = parseRtp(m);
      if (!p || p.payloadType > 8) return;
      c.sink.noteRtpSequence(p.sequence);
      atSink(c, () => (p.payloadType === 8 ? alawDecode(p.payload) : mulawDecode(p.payload)), from.arrivedAt);
    });
    const user = `agent${i}x${Date.now() % 100000}`;
    gw.pendingAgents.set(user, c);
    const r = await gw.link.ask<{ ok?: true; error?: string }>({ cmd: 'dial', sessionId: s.id, to: `sip:${user}@127.0.0.1:${gw.ua.port}` });
    if (r.error || !c.agentGw) throw new Error(`agent leg ${i}: ${r.error ?? 'no SDP offer'}`);
    if (PHONES_CONNECT) agent.connectTo?.(c.agentGw);
  }
  if (refused) throw new Error(refused);
}

/** One 20 ms tick of a call's phones; `sendAt` is when their packets leave (a loud frame's send time). */
function sendPhones(c: CallEnds, tick: number, sendAt: number): void {
  const loud = tick % BURST_EVERY === c.markerPhase;
  if (c.customer) {
    c.customer.send(
      serializeRtp({
        marker: c.customerSeq === 0,
        payloadType: 8,
        sequence: c.customerSeq & 0xffff,
        timestamp: (c.customerSeq * FRAME) >>> 0,
        ssrc: 1234,
        payload: loud ? LOUD.alaw : QUIET.alaw,
      }),
      c.customerGwPort,
      '127.0.0.1',
    );
    c.customerSeq++;
    if (loud) markLoud(c, sendAt);
  }
  if (c.agent && c.agentGw) {
    c.agent.send(
      serializeRtp({
        marker: c.agentSeq === 0,
        payloadType: 0,
        sequence: c.agentSeq & 0xffff,
        timestamp: (c.agentSeq * FRAME) >>> 0,
        ssrc: 4321,
        payload: QUIET.mulaw,
      }),
      c.agentGw.port,
      c.agentGw.address,
    );
    c.agentSeq++;
  }
}

/** One 20 ms tick of a call's socket client (the socket scenarios), sent now. */
function sendSocket(scenario: Scenario, c: CallEnds, tick: number): void {
  const now = performance.now();
  if (scenario === 'socket_to_rtp') {
    const loud = tick % BURST_EVERY === c.markerPhase;
    sendAudioInput(c, loud ? LOUD.mulaw : QUIET.mulaw);
    if (loud) markLoud(c, now);
  } else if (scenario === 'socket_chunks_to_rtp') {
    // A loud frame opens every third chunk (bursts 300–600 ms apart); the chunk leaves once full.
    const opensChunk = c.chunk.length === 0;
    c.chunk.push(opensChunk && c.chunksSent % 3 === 0 ? LOUD.mulaw : QUIET.mulaw);
    if (c.chunk.length < c.chunkFrames) return;
    sendAudioInput(c, Buffer.concat(c.chunk));
    if (c.chunksSent % 3 === 0) markLoud(c, now);
    c.chunksSent++;
    c.chunk = [];
  }
}

function markLoud(c: CallEnds, now: number): void {
  c.lastLoudSentAt = now;
  c.awaitingLoud = true;
  c.burstsSent++;
}

function sendAudioInput(c: CallEnds, mulaw: Buffer): void {
  c.ws.send(
    `{"type":"audio.input","sequence":${++c.wsSeq},"speaker":"customer","audio":{"encoding":"mulaw","sample_rate_hz":8000,"payload":"${mulaw.toString('base64')}"}}`,
  );
}

/** The same request to every node, in parallel. */
const askAll = <T>(nodes: BenchGateway[], msg: object): Promise<T[]> => Promise.all(nodes.map((n) => n.link.ask<T>(msg)));

/**
 * The nodes' usage read as one gateway's: CPU, memory, calls and media counters summed; the media figures
 * that are a maximum (`max…`, `loopDelay…`) the worst node's, and those that are an average over live legs
 * (`…Avg`) weighted by each node's legs. The per-stage histograms and the stalls (BENCH_STAGES) are the
 * first node's.
 */
function combined(us: Usage[]): Usage {
  const [first, ...rest] = us;
  if (!first || rest.length === 0) return first as Usage;
  const sum = (f: (u: Usage) => number | null | undefined): number => us.reduce((a, u) => a + (f(u) ?? 0), 0);
  const legs = sum((u) => u.media?.qualityLegs);
  const media: Record<string, number> = {};
  for (const key of new Set(us.flatMap((u) => Object.keys(u.media ?? {})))) {
    const of = (u: Usage): number => u.media?.[key] ?? 0;
    if (/^(max|loopDelay)/.test(key)) media[key] = Math.max(...us.map(of));
    else if (key.endsWith('Avg')) media[key] = legs > 0 ? Math.round((sum((u) => of(u) * (u.media?.qualityLegs ?? 0)) / legs) * 100) / 100 : 0;
    else media[key] = sum(of);
  }
  return {
    ...first,
    media,
    cpu: { user: sum((u) => u.cpu.user), system: sum((u) => u.cpu.system) },
    mainThreadCpuUs: us.every((u) => u.mainThreadCpuUs != null) ? sum((u) => u.mainThreadCpuUs) : null,
    sendThreadCpuUs: us.every((u) => u.sendThreadCpuUs != null) ? sum((u) => u.sendThreadCpuUs) : null,
    recvThreadCpuUs: us.every((u) => u.recvThreadCpuUs != null) ? sum((u) => u.recvThreadCpuUs) : null,
    rss: sum((u) => u.rss),
    heapUsed: sum((u) => u.heapUsed),
    activeCalls: sum((u) => u.activeCalls),
  };
}

/** The busiest node's main thread (the event loop that saturates first), or send or receive thread, in % of a core over `seconds`. */
function busiestThread(thread: 'mainThreadCpuUs' | 'sendThreadCpuUs' | 'recvThreadCpuUs', before: Usage[], after: Usage[], seconds: number): number | null {
  const shares = after.flatMap((u, j) => {
    const a = u[thread];
    const b = before[j]?.[thread];
    return a == null || b == null ? [] : [Math.round(((a - b) / 1e6 / seconds) * 100)];
  });
  return shares.length > 0 ? Math.max(...shares) : null;
}

export async function runStep(nodes: BenchGateway[], scenario: Scenario, calls: number, seconds: number): Promise<StepResult> {
  // Stage histograms restart here too, so the warm-up's own (printed with BENCH_STAGES) hold this step's calls only.
  const baseline = combined(await askAll<Usage>(nodes, { cmd: 'usage', resetStages: true }));
  // Call i on node i mod N, as the edge's round-robin dispatcher deals them.
  const n = nodes.length;
  const prepared = await Promise.all(
    nodes.map((node, j) =>
      node.link.ask<{ sessions: { number: string; id: string; wsUrl: string }[] }>({ cmd: 'prepare', calls: Math.floor((calls - j + n - 1) / n) }),
    ),
  );
  const ends: CallEnds[] = [];
  const failures: string[] = [];
  const connectAll = async (): Promise<void> => {
    const began = performance.now();
    for (let i = 0; i < calls; i++) {
      const node = nodes[i % n];
      const s = prepared[i % n]?.sessions[Math.floor(i / n)];
      if (!node || !s) throw new Error(`no session prepared for call ${i}`);
      if (RAMP_CALLS_PER_SECOND > 0) {
        const wait = began + (i * 1000) / RAMP_CALLS_PER_SECOND - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      try {
        ends.push(await connectCall(node, scenario, i, s));
      } catch (err) {
        failures.push(String(err));
      }
    }
    if (failures.length > 0) console.error(`${scenario} ${calls}: ${failures.length} calls not set up; the first: ${failures[0]}`);
  };
  // Without a ramp every call is up before the first tick; with one, the warm-up starts when the last is in.
  let warmupEnd = WARMUP_TICKS;
  let totalTicks = seconds * 50 + WARMUP_TICKS;
  let ramping: Promise<void> | null = null;
  if (RAMP_CALLS_PER_SECOND > 0) {
    warmupEnd = totalTicks = Number.POSITIVE_INFINITY;
    ramping = connectAll();
  } else await connectAll();
  let usage0s = await askAll<Usage>(nodes, { cmd: 'usage' });
  let usage0Pending: Promise<Usage[]> | null = null;
  let t0 = performance.now();
  let genCpu0 = process.cpuUsage();
  let host0 = hostCpu();
  // The load generator's own stalls: a late timer sends a burst, and a late 'message' stamps frames late.
  const stallMs = benchStallMs();
  const genProbe = STAGES ? new LoopProbe(stallMs, 5) : null;
  let genWarmup: ReturnType<LoopProbe['take']> | null = null;
  const start = performance.now();
  let tick = 0;
  /** Latencies of the warm-up (the calls' first seconds), and when their loud frames left. */
  const startup: number[] = [];
  const startupSentAt: number[] = [];
  const hangupTick = HANGUP_HALF && RAMP_CALLS_PER_SECOND === 0 ? WARMUP_TICKS + Math.floor((seconds * 50) / 2) : -1;
  let hangupAtMs = NaN;
  /** The hang-up on the monotonic clock every process shares, in µs: profile-top's --until is counted on it. */
  let hangupHrUs = 0;
  // Tick t is the phones' and the socket's frame of time start + (t + 1) × 20 ms, plus its phase's part of
  // the frame. The phones' packets are queued `lead` ticks before that, to leave at that time from the
  // addon's send thread; a socket frame is sent by this loop once its time has come (WebSocket has no
  // send-at). `tick` counts the ticks whose time has come: the warm-up and the hang-up follow it.
  const socketsSend = !customerIsPhone(scenario);
  const lockstep = socketsSend && SOCKET_CALLS_LOCKSTEP;
  const phases = lockstep ? 1 : PHONES_PHASES;
  const lead = lockstep ? 0 : PHONES_LEAD_TICKS;
  const phaseOf = (c: CallEnds): number => c.markerPhase % phases;
  let phoneTick = 0;
  const socketTicks = Array.from({ length: phases }, () => 0);
  void ramping?.then(() => {
    warmupEnd = tick + WARMUP_TICKS;
    totalTicks = warmupEnd + seconds * 50;
  });
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - start;
      for (const passed = Math.min(totalTicks, Math.floor(elapsed / 20)); tick < passed; tick++) {
        if (tick === warmupEnd) {
          // The stage histograms restart here, so the ones printed cover the measured window only.
          usage0Pending = askAll<Usage>(nodes, { cmd: 'usage', resetStages: true });
          t0 = performance.now();
          genCpu0 = process.cpuUsage();
          host0 = hostCpu();
          genWarmup = genProbe?.take() ?? null;
          for (const c of ends) {
            startup.push(...c.latencies);
            startupSentAt.push(...c.latencySentAt);
            c.latencies = [];
            c.latencySentAt = [];
            c.sink.reset();
            c.burstsSent = 0;
            c.awaitingLoud = false;
          }
        }
        if (tick === hangupTick) {
          hangupAtMs = performance.now() - t0;
          hangupHrUs = Number(process.hrtime.bigint() / 1000n);
          const leaving = ends.filter((_, i) => i % 2 === 1);
          ends.splice(0, ends.length, ...ends.filter((_, i) => i % 2 === 0));
          for (const c of leaving) void hangUp(c);
        }
      }
      for (const queueUntil = Math.min(totalTicks, tick + lead); phoneTick < queueUntil; phoneTick++) {
        const now = performance.now();
        for (let phase = 0; phase < phases; phase++) {
          const sendAt = Math.max(now, start + (phoneTick + 1) * 20 + (phase * 20) / phases);
          phoneIo?.sendNotBefore(sendAt);
          for (const c of ends) if (phaseOf(c) === phase) sendPhones(c, phoneTick, sendAt);
        }
        phoneIo?.sendNotBefore(0);
      }
      if (socketsSend) {
        socketTicks.forEach((from, phase) => {
          const due = Math.min(totalTicks, Math.floor((elapsed - (phase * 20) / phases) / 20));
          for (let t = from; t < due; t++) for (const c of ends) if (phaseOf(c) === phase) sendSocket(scenario, c, t);
          socketTicks[phase] = Math.max(from, due);
        });
      }
      if (tick >= totalTicks && phoneTick >= totalTicks && (!socketsSend || socketTicks.every((t) => t >= totalTicks))) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  await ramping;
  const connected = ends.length;
  const elapsed = (performance.now() - t0) / 1000;
  if (HANGUP_HALF) console.log(`${scenario} ${calls}: half of the calls hung up ${Math.round(hangupAtMs)} ms into the window (hrUs ${hangupHrUs})`);
  const genCpu = process.cpuUsage(genCpu0);
  const host = hostShares(host0, hostCpu());
  // Assigned in the timer callback, which control-flow narrowing cannot see.
  const pending = usage0Pending as Promise<Usage[]> | null;
  if (pending) usage0s = await pending;
  const usage1s = await askAll<Usage>(nodes, { cmd: 'usage' });
  const usage0 = combined(usage0s);
  const usage1 = combined(usage1s);
  const genStalls = genProbe?.take();
  genProbe?.stop();
  const framesAtSink = ends.reduce((a, c) => a + c.sink.count, 0);
  const burstsSent = ends.reduce((a, c) => a + c.burstsSent, 0);
  // In-flight loud frames land; the last burst of each call is not counted when it is still on its way.
  await new Promise((r) => setTimeout(r, 300));
  const timeline = STAGES ? latencyTimeline(start, [startupSentAt, ...ends.map((c) => c.latencySentAt)], [startup, ...ends.map((c) => c.latencies)]) : '';
  const latencies = ends.flatMap((c) => c.latencies).sort((a, b) => a - b);
  startup.sort((a, b) => a - b);
  const stillAwaiting = ends.filter((c) => c.awaitingLoud).length;
  const cpuSec = (usage1.cpu.user - usage0.cpu.user + usage1.cpu.system - usage0.cpu.system) / 1e6;
  const framesExpected = Math.round(elapsed * 50) * ends.length;
  const media = (k: string): number => (usage1.media?.[k] ?? 0) - (usage0.media?.[k] ?? 0);
  const sinkShortPercent = pct(
    framesShort(
      ends.map((c) => c.sink),
      framesExpected,
    ),
    framesExpected,
  );
  const burstLossPercent = Math.max(0, pct(burstsSent - latencies.length - stillAwaiting, burstsSent));
  const gatewayDiscardPercent = pct(audioDiscarded(media), media('packetsIn'));
  const live = Math.max(1, ends.length);
  const r: StepResult = {
    scenario,
    calls,
    nodes: n,
    connected,
    seconds: Math.round(elapsed * 10) / 10,
    framesExpected,
    framesAtSink,
    sinkShortPercent,
    burstsSent,
    burstsDelivered: latencies.length,
    burstLossPercent,
    gatewayDiscardPercent,
    gatewaySilenceTrimmedPercent: pct(media('silenceTrimmed'), media('packetsIn')),
    gatewayConcealedPercent: pct(media('concealed'), media('played') + media('concealed')),
    clockLatePercent: pct(media('clockLateRuns'), media('clockRuns')),
    pacerGapPercent: pct(media('pacerLive_underruns'), framesExpected),
    lossPercent: Math.max(sinkShortPercent, burstLossPercent, gatewayDiscardPercent),
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    latencyMaxMs: percentile(latencies, 100),
    startupP99Ms: percentile(startup, 99),
    gatewayCpuPercentOfOneCore: Math.round((cpuSec / elapsed) * 100),
    gatewayMainThreadPercent: busiestThread('mainThreadCpuUs', usage0s, usage1s, elapsed),
    gatewaySendThreadPercent: busiestThread('sendThreadCpuUs', usage0s, usage1s, elapsed),
    gatewayRecvThreadPercent: busiestThread('recvThreadCpuUs', usage0s, usage1s, elapsed),
    cpuMsPerCallSecond: Math.round(((cpuSec * 1000) / (elapsed * live)) * 100) / 100,
    // Against the gateway before this step's calls existed (garbage of earlier steps blurs it).
    rssMbPerCall: Math.round(((usage1.rss - baseline.rss) / 1e6 / live) * 1000) / 1000,
    heapMbPerCall: Math.round((((usage1.heapUsed ?? 0) - (baseline.heapUsed ?? 0)) / 1e6 / live) * 1000) / 1000,
    loadGeneratorCpuPercent: Math.round(((genCpu.user + genCpu.system) / 1e6 / elapsed) * 100),
    gatewayLoopDelayP99Ms: usage1.media?.loopDelayP99Ms,
    gcPromotedKbPerCallSecond: Math.round((media('gcPromotedBytes') / 1e3 / (elapsed * live)) * 100) / 100,
    gcMarkCompacts: media('gcMarkCompacts'),
    gcMarkCompactMs: Math.round(media('gcMarkCompactMs')),
    hostBusyPercent: host.busyPercent,
    hostStealPercent: host.stealPercent,
  };
  if (STAGES) {
    const types: Record<string, number> = {};
    for (const c of ends) for (const [k, v] of Object.entries(c.wsTypes)) types[k] = (types[k] ?? 0) + v;
    console.log(`${scenario} ${calls}: socket messages received by type:`, JSON.stringify(types));
    console.log(`${scenario} ${calls}: gateway per-stage time in the warm-up (ms):`, JSON.stringify(usage0.stages));
    console.log(`${scenario} ${calls}: gateway per-stage time in the window (ms):`, JSON.stringify(usage1.stages));
    console.log(`${scenario} ${calls}: gateway media counters:`, JSON.stringify(usage1.media));
    console.log(`${scenario} ${calls}: latency p50/max ms by loud frames' send time (s from the calls' start, warm-up included): ${timeline}`);
    if (phases > 1) {
      const byPhase = Array.from({ length: phases }, (_, phase) => {
        const sorted = ends.filter((c) => phaseOf(c) === phase).flatMap((c) => c.latencies);
        sorted.sort((a, b) => a - b);
        return `${(phase * 20) / phases} ms: ${percentile(sorted, 50)}/${percentile(sorted, 99)}`;
      });
      console.log(`${scenario} ${calls}: latency p50/p99 ms by the phones' phase in the frame: ${byPhase.join(', ')}`);
    }
  }
  if (STAGES && usage0.probe) {
    // The warm-up's stalls, in ms from the calls' start (the gateway's clock placed by the warm-up's end).
    const gwStart = usage0.probe.nowMs - WARMUP_TICKS * 20;
    const list = (p: { stalls: { atMs: number; lateMs: number }[]; gcs: { atMs: number; ms: number }[] }, t: number) =>
      JSON.stringify({
        stalls: p.stalls.map((st) => [Math.round(st.atMs - t), st.lateMs]),
        gcs: p.gcs.map((g) => [Math.round(g.atMs - t), g.ms]),
      });
    console.log(
      `${scenario} ${calls}: warm-up [at ms, lasting ms]: gateway ${list(usage0.probe, gwStart)}`,
      genWarmup ? `load generator ${list(genWarmup, start)}` : '',
    );
  }
  if (STAGES && usage1.probe) {
    // Times from the end of the warm-up (the measured window): a stall there delays every call's frames at once.
    const from = usage0.probe?.nowMs ?? 0;
    const at = (ms: number): number => ms - from;
    console.log(
      `${scenario} ${calls}: gateway loop stalls > ${stallMs} ms in the window:`,
      JSON.stringify(usage1.probe.stalls.map((st) => ({ atMs: at(st.atMs), lateMs: st.lateMs, cpuMs: st.cpuMs, overMs: st.overMs, hrUs: st.hrUs }))),
      'GC pauses ≥ 5 ms:',
      JSON.stringify(usage1.probe.gcs.map((g) => ({ atMs: at(g.atMs), ms: g.ms, kind: g.kind }))),
    );
  }
  if (genStalls) {
    // When the tail happened (by the loud frame's send time, 100 ms bins from the window's start), next
    // to the load generator's own stalls: the same instant in every call points at one process.
    const tailFrom = Math.max(60, r.latencyP99Ms);
    const bins = new Map<number, { n: number; maxMs: number }>();
    for (const c of ends)
      c.latencies.forEach((ms, k) => {
        if (ms < tailFrom) return;
        const bin = Math.floor(((c.latencySentAt[k] ?? 0) - t0) / 100) * 100;
        const b = bins.get(bin) ?? { n: 0, maxMs: 0 };
        b.n++;
        b.maxMs = Math.max(b.maxMs, Math.round(ms));
        bins.set(bin, b);
      });
    const top = [...bins.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 8);
    console.log(
      `${scenario} ${calls}: samples ≥ ${tailFrom} ms by send time (ms into the window):`,
      JSON.stringify(top.map(([atMs, b]) => ({ atMs, ...b }))),
      `load generator stalls > ${stallMs} ms:`,
      JSON.stringify(genStalls.stalls.map((st) => ({ atMs: Math.round(st.atMs - t0), lateMs: st.lateMs, cpuMs: st.cpuMs, overMs: st.overMs }))),
      'its GC pauses ≥ 5 ms:',
      JSON.stringify(genStalls.gcs.map((g) => ({ atMs: Math.round(g.atMs - t0), ms: g.ms, kind: g.kind }))),
    );
  }
  if (STAGES) {
    // Which calls miss markers or carry the tail: a per-call fault looks different from a loaded loop.
    const perCall = ends.map((c, i) => {
      const l = [...c.latencies].sort((a, b) => a - b);
      return { i, sent: c.burstsSent, seen: l.length, p50: percentile(l, 50), max: percentile(l, 100) };
    });
    const odd = perCall.filter((p) => p.seen < p.sent - 1 || p.max > 80);
    if (odd.length) console.log(`${scenario} ${calls}: calls missing markers or over 80 ms:`, JSON.stringify(odd.slice(0, 20)));
  }
  for (const c of ends) await hangUp(c);
  for (let i = 0; i < 200; i++) {
    const u = combined(await askAll<Usage>(nodes, { cmd: 'usage' }));
    if (u.activeCalls === 0) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return r;
}

/** Both ends of a call hang up: BYE on each leg, then the socket and the RTP sockets close. */
async function hangUp(c: CallEnds): Promise<void> {
  await c.customerDialog?.bye('bench_done').catch(() => undefined);
  await c.agentDialog?.bye('bench_done').catch(() => undefined);
  c.ws.close();
  closePhone(c.customer);
  closePhone(c.agent);
}

/**
 * Latency by when the loud frames left, in 500 ms bins from the calls' start ("1.5:47/52"): shows how
 * long an event (the start-up burst, a stall) held added latency, which one p99 figure cannot.
 */
function latencyTimeline(start: number, sentAt: number[][], latencies: number[][]): string {
  const bins = new Map<number, number[]>();
  sentAt.forEach((times, i) =>
    times.forEach((t, k) => {
      const bin = Math.floor((t - start) / 500);
      const b = bins.get(bin) ?? [];
      b.push(latencies[i]?.[k] ?? NaN);
      bins.set(bin, b);
    }),
  );
  return [...bins.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bin, l]) => {
      l.sort((a, b) => a - b);
      return `${bin / 2}:${Math.round(percentile(l, 50))}/${Math.round(percentile(l, 100))}`;
    })
    .join(' ');
}

export function describe(r: StepResult): string {
  const on = r.nodes > 1 ? ` on ${r.nodes} nodes` : '';
  return `${r.scenario} ${r.connected}/${r.calls} calls${on}: latency p50 ${r.latencyP50Ms} p99 ${r.latencyP99Ms} max ${r.latencyMaxMs} ms (first ${WARMUP_TICKS / 50} s: p99 ${r.startupP99Ms} ms); bursts ${r.burstsDelivered}/${r.burstsSent}; sink short ${r.sinkShortPercent}%, gateway discarded ${r.gatewayDiscardPercent}% (silence trimmed ${r.gatewaySilenceTrimmedPercent}%), concealed ${r.gatewayConcealedPercent}%, pacer gaps ${r.pacerGapPercent}%; media clock late ${r.clockLatePercent}%; gateway ${r.gatewayCpuPercentOfOneCore}% of a core (${r.nodes > 1 ? 'busiest ' : ''}main thread ${r.gatewayMainThreadPercent ?? '?'}%, send thread ${r.gatewaySendThreadPercent ?? '?'}%, receive thread ${r.gatewayRecvThreadPercent ?? '?'}%, ${r.cpuMsPerCallSecond} ms CPU per call-second), RSS ${r.rssMbPerCall} MB/call, heap ${r.heapMbPerCall} MB/call; loop delay p99 ${r.gatewayLoopDelayP99Ms} ms; GC promoted ${r.gcPromotedKbPerCallSecond} KB per call-second, ${r.gcMarkCompacts} mark-compacts (${r.gcMarkCompactMs} ms); load generator ${r.loadGeneratorCpuPercent}%; host busy ${r.hostBusyPercent}% of all cores, steal ${r.hostStealPercent}%`;
}
