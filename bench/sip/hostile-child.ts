// The gateway under the hostile-rate-with-live-calls benchmark, in its own process: server.ts wiring
// (API, sessions, sockets, SIP) with SIP on UDP and TCP (hostile input arrives on both), engines
// off, the SIP front's default caps and guard (loopback is allow-listed: the hostile source is never
// banned, so every message goes through the framing layer — the worst case).
// IPC: {cmd:'prepare', calls} → {sessions:[{number,id,wsUrl}]}; {cmd:'usage'} → cpu, media and
// refusal counters, event-loop delay since the last usage, stalls and GC pauses (loop-probe.ts)
// with their times since the child started; {cmd:'stop'}.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startBenchSipGateway } from './bench-gateway.js';
import { LoopProbe } from './loop-probe.js';

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
// Stalls over 50 ms and GC pauses over 5 ms, with their times: hostile-live.ts prints them per step.
const probe = new LoopProbe(50, 5);

const { t, telephony, prepareSessions } = await startBenchSipGateway({ transports: ['udp', 'tcp'], rtpPortMin: 40000, rtpPortMax: 49998, logLevel: 'error' });

interface ParentMessage {
  cmd: string;
  calls?: number;
}

async function onParentMessage(msg: ParentMessage): Promise<void> {
  if (msg.cmd === 'prepare') {
    process.send!({ sessions: await prepareSessions(msg.calls ?? 0) });
  } else if (msg.cmd === 'usage') {
    process.send!({
      cpu: process.cpuUsage(),
      rss: process.memoryUsage().rss,
      activeCalls: telephony.activeCalls,
      media: telephony.mediaStats(),
      refused: telephony.refusedCounts(),
      loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e5) / 10,
      loopDelayMaxMs: Math.round(loopDelay.max / 1e5) / 10,
      probe: probe.take(),
    });
    loopDelay.reset();
  } else if (msg.cmd === 'stop') {
    await t.stop();
    process.exit(0);
  }
}

process.on('message', (m: ParentMessage) => void onParentMessage(m));
process.send!({ ready: true, sipPort: telephony.sipPort });
