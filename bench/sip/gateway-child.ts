// The gateway under test for the concurrent-calls, media and hostile-input benchmarks, in its own
// process (own event loop and CPU accounting): server.ts wiring with the media role, SIP on a free
// port, engines off, MEDIA_WORKERS (RTP socket worker threads, default 0) and MEDIA_IO (auto | dgram |
// native, default auto as in production), MEDIA_IO_URING, MEDIA_IO_SEND_THREAD and MEDIA_IO_RECV_THREAD from the environment, and the socket workers' or the batched
// reader's counters in `usage`. The parent picks, by environment:
//   BENCH_GATEWAY_TRANSPORTS=udp[,tcp]   SIP transports (hostile input arrives on both)
//   BENCH_GATEWAY_RTP_BASE=20000         first RTP port of the node's range
//   BENCH_GATEWAY_RTP_PORTS=9999         ports in that range (several nodes on one host split one range)
//   BENCH_GATEWAY_LOG_LEVEL=warn         (hostile input would log a refusal per source otherwise)
//   BENCH_GATEWAY_GRACE_SECONDS=300      how long a session outlives its last leg and socket
//   BENCH_TIMELINE_MS=250                a `timeline` line on stderr this often while legs are up (see startTimeline)
// IPC: {cmd:'prepare', calls} → {sessions:[{number,id,token}]}; {cmd:'usage'} → cpu/memory, media and
// refusal counters, running GC totals (gc-totals.ts), loop stalls and GC pauses since the last usage (loop-probe.ts);
// {cmd:'dial', sessionId, to} → {ok} | {error} (an agent leg dialled out, bench/media); {cmd:'stop'}.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DEFAULT_MEDIA_SUBTICKS, mediaStageSummary, processMediaClock, resetMediaStages } from '../../src/media/index.js';
import { startBenchSipGateway } from './bench-gateway.js';
import { runningRtpSocketPool } from '../../src/telephony/rtp/socket-pool.js';
import {
  RTP_RECV_THREAD_NAME,
  RTP_SEND_THREAD_NAME,
  nativeRtpIoCounts,
  useIoUringForRtp,
  useRecvThreadForRtp,
  useSendThreadForRtp,
} from '../../src/telephony/rtp/native-io.js';
import { loadConfig } from '../../src/config/index.js';
import { pacerLiveTotals } from '../../src/sessions/index.js';
import { LoopProbe, benchStallMs } from './loop-probe.js';
import { GcTotals } from './gc-totals.js';
import { namedThreadsCpuUs, threadCpuUs } from '../thread-cpu.js';

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
// Stalls over BENCH_STALL_MS (default 50 ms) with the CPU used meanwhile, and GC pauses of 5 ms or
// more (printed with BENCH_STAGES).
const probe = new LoopProbe(benchStallMs(), 5);
const gcTotals = new GcTotals();

const rtpBase = Number(process.env.BENCH_GATEWAY_RTP_BASE ?? 20000);
const rtpPorts = Number(process.env.BENCH_GATEWAY_RTP_PORTS ?? 9999);
const { t, telephony, prepareSessions } = await startBenchSipGateway({
  transports: (process.env.BENCH_GATEWAY_TRANSPORTS ?? 'udp').split(',') as ('udp' | 'tcp')[],
  rtpPortMin: rtpBase,
  rtpPortMax: rtpBase + rtpPorts - 1,
  logLevel: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn',
});
// The telephony service reads its SIP settings from this object at each call's set-up. MEDIA_WORKERS and
// MEDIA_IO (and STREAM_DIRECT_SEND, STREAM_TICK_READ, LIVE_MIN/MAX_MARGIN_FRAMES, JITTER_TRIM_SLACK, MEDIA_SUBTICKS) are parsed and checked as the gateway's own configuration does (the test config ignores the environment).
const fromEnv = loadConfig({
  MEDIA_WORKERS: process.env.MEDIA_WORKERS,
  MEDIA_IO: process.env.MEDIA_IO,
  MEDIA_IO_URING: process.env.MEDIA_IO_URING,
  MEDIA_IO_SEND_THREAD: process.env.MEDIA_IO_SEND_THREAD,
  MEDIA_IO_RECV_THREAD: process.env.MEDIA_IO_RECV_THREAD,
  STREAM_DIRECT_SEND: process.env.STREAM_DIRECT_SEND,
  STREAM_TICK_READ: process.env.STREAM_TICK_READ,
  LIVE_MIN_MARGIN_FRAMES: process.env.LIVE_MIN_MARGIN_FRAMES,
  LIVE_MAX_MARGIN_FRAMES: process.env.LIVE_MAX_MARGIN_FRAMES,
  JITTER_TRIM_SLACK: process.env.JITTER_TRIM_SLACK,
  MEDIA_SUBTICKS: process.env.MEDIA_SUBTICKS,
});
const media = fromEnv.sip;
// Read at each stream connection.
t.gw.config.streamDirectSend = fromEnv.streamDirectSend;
t.gw.config.streamTickRead = fromEnv.streamTickRead;
t.gw.config.liveMinMarginFrames = fromEnv.liveMinMarginFrames; // read at each session's start
t.gw.config.liveMaxMarginFrames = fromEnv.liveMaxMarginFrames;
t.gw.config.sip.mediaWorkers = media.mediaWorkers ?? 0;
t.gw.config.sip.mediaIo = media.mediaIo;
t.gw.config.sip.jitterTrimSlack = media.jitterTrimSlack;
// Before the first call's socket makes the batched reader, and before anything listens to the clock.
processMediaClock.setSubTicks(media.mediaSubTicks ?? DEFAULT_MEDIA_SUBTICKS);
useIoUringForRtp(media.mediaIoUring ?? true);
useSendThreadForRtp(media.mediaIoSendThread ?? true);
useRecvThreadForRtp(media.mediaIoRecvThread ?? false);

if (process.env.BENCH_GATEWAY_GRACE_SECONDS) t.gw.config.limits.reconnectGraceSeconds = Number(process.env.BENCH_GATEWAY_GRACE_SECONDS);

interface ParentMessage {
  cmd: string;
  calls?: number;
  sessionId?: string;
  to?: string;
  /** With `usage`: the media stage histograms restart after this reading. */
  resetStages?: boolean;
}

async function onParentMessage(msg: ParentMessage): Promise<void> {
  if (msg.cmd === 'prepare') {
    process.send!({ sessions: await prepareSessions(msg.calls ?? 0) });
  } else if (msg.cmd === 'usage') {
    process.send!({
      stages: await mediaStageSummary(),
      cpu: process.cpuUsage(),
      mainThreadCpuUs: threadCpuUs(process.pid), // the main thread alone: the event loop
      sendThreadCpuUs: namedThreadsCpuUs(RTP_SEND_THREAD_NAME), // MEDIA_IO=native: the addon's send thread, its kernel time nearly all
      recvThreadCpuUs: namedThreadsCpuUs(RTP_RECV_THREAD_NAME), // MEDIA_IO_RECV_THREAD: the addon's receive thread
      rss: process.memoryUsage().rss,
      heapUsed: process.memoryUsage().heapUsed,
      activeCalls: telephony.activeCalls,
      refused: telephony.refusedCounts(),
      probe: probe.take(),
      media: {
        ...telephony.mediaStats(),
        streamOutputDropped: t.stream.outputDropped,
        ...Object.fromEntries(Object.entries(pacerLiveTotals).map(([k, v]) => [`pacerLive_${k}`, v])),
        loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e5) / 10,
        loopDelayMaxMs: Math.round(loopDelay.max / 1e5) / 10,
        ...gcTotals.take(),
        ...Object.fromEntries(Object.entries(runningRtpSocketPool()?.counts ?? {}).map(([k, v]) => [`worker_${k}`, v])),
        ...Object.fromEntries(Object.entries(nativeRtpIoCounts() ?? {}).map(([k, v]) => [`native_${k}`, v])),
      },
    });
    loopDelay.reset();
    if (msg.resetStages) resetMediaStages();
  } else if (msg.cmd === 'dial') {
    try {
      await telephony.dial(msg.sessionId ?? '', t.org.orgId, { to: msg.to, party: 'agent', ringTimeoutSeconds: 30 });
      process.send!({ ok: true });
    } catch (err) {
      process.send!({ error: String(err) });
    }
  } else if (msg.cmd === 'stop') {
    await t.stop();
    process.exit(0);
  }
}

/**
 * Every `everyMs` while the node has legs, one line on stderr of what they did since the last: underruns,
 * concealed and dropped frames, the legs' mean jitter-buffer target, and each stage's mean time (ms since
 * this process started). It shows when in a run latency was added, to how many legs at once, and by which
 * rule (a target grown on repeated underruns, frames trimmed and then missed), which the window's
 * histograms cannot.
 */
function startTimeline(everyMs: number): void {
  let before: Record<string, number> = {};
  let stagesBefore: Awaited<ReturnType<typeof mediaStageSummary>> = {};
  const meanSince = (now: typeof stagesBefore, stage: string): number => {
    const a = now[stage];
    const b = stagesBefore[stage] ?? { count: 0, meanMs: 0 };
    const count = (a?.count ?? 0) - b.count;
    return count > 0 ? Math.round(((a!.count * a!.meanMs - b.count * b.meanMs) / count) * 10) / 10 : NaN;
  };
  const line = async (): Promise<void> => {
    const m = telephony.mediaStats();
    if (!m.legs) return;
    const stages = await mediaStageSummary();
    const since = (k: string): number => (m[k] ?? 0) - (before[k] ?? 0);
    console.error(
      `timeline ${Math.round(performance.now())} ms: legs ${m.legs}, underruns ${since('underruns')}, concealed ${since('concealed')}, dropped ${since('dropped')} (trimmed ${since('silenceTrimmed')}), target ${m.jitterTargetFramesAvg} frames, playout moved later ${since('playoutMovesLater')} earlier ${since('playoutMovesEarlier')}; mean ms: jitter buffer ${meanSince(stages, 'jitter_buffer')}, pacer ${meanSince(stages, 'pacer')}, rtp send ${meanSince(stages, 'rtp_send')}`,
    );
    before = m;
    stagesBefore = stages;
  };
  setInterval(() => void line(), everyMs).unref();
}
if (process.env.BENCH_TIMELINE_MS) startTimeline(Number(process.env.BENCH_TIMELINE_MS));

// A rejected handler would be an unhandled rejection: the handler catches, the listener discards.
process.on('message', (m: ParentMessage) => void onParentMessage(m));
process.send!({ ready: true, sipPort: telephony.sipPort });
