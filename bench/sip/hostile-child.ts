// The gateway under the hostile-rate-with-live-calls benchmark, in its own process: server.ts wiring
// (API, sessions, sockets, SIP) with SIP on UDP and TCP (hostile input arrives on both), engines
// off, the SIP front's default caps and guard (loopback is allow-listed: the hostile source is never
// banned, so every message goes through the framing layer — the worst case).
// IPC: {cmd:'prepare', calls} → {sessions:[{number,id,wsUrl}]}; {cmd:'usage'} → cpu, media and
// refusal counters, event-loop delay since the last usage; {cmd:'stop'}.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startStreamGateway } from '../../test/helpers/stream.js';
import * as repo from '../../src/store/telephony-repo.js';
import { updateOrg } from '../../src/store/index.js';
import type { Telephony } from '../../src/telephony/index.js';

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();

const t = await startStreamGateway({
  engines: 'none',
  overrides: {
    roles: ['api', 'media', 'worker'],
    logLevel: 'error',
    sip: {
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      transports: ['udp', 'tcp'],
      advertisedAddress: '127.0.0.1',
      rtpPortMin: 40000,
      rtpPortMax: 49998,
      rtpTimeoutSeconds: 60,
      maxConcurrentCalls: 5000,
      realm: 'bench',
    },
  },
});
const telephony = (t.gw as unknown as { telephony: Telephony }).telephony;
await updateOrg(t.gw.db, t.org.orgId, { sipEnabled: true, maxConcurrentSessions: 100000 });
const conn = await repo.createConnection(t.gw.db, {
  orgId: t.org.orgId,
  provider: 'carrier_a',
  host: '127.0.0.1',
  port: 5060,
  transport: 'udp',
  inboundCidrs: ['127.0.0.0/8'],
});
let numberSeq = 1_000_000 + Math.floor(Math.random() * 8_000_000);

interface ParentMessage {
  cmd: string;
  calls?: number;
}

async function onParentMessage(msg: ParentMessage): Promise<void> {
  if (msg.cmd === 'prepare') {
    const sessions = [];
    for (let i = 0; i < (msg.calls ?? 0); i++) {
      const number = `+1555${numberSeq++}`;
      await repo.createPhoneNumber(t.gw.db, { orgId: t.org.orgId, number, connectionId: conn.id });
      const { id, token } = await t.createSession({
        mode: 'assistive_translation',
        source_language: 'en',
        target_language: 'es',
        routing: { phone_number: number },
      });
      await t.gw.db.query('UPDATE sessions SET phone_number = $2 WHERE id = $1', [id, number]);
      sessions.push({ number, id, wsUrl: t.wsUrl(id, token) });
    }
    process.send!({ sessions });
  } else if (msg.cmd === 'usage') {
    process.send!({
      cpu: process.cpuUsage(),
      rss: process.memoryUsage().rss,
      activeCalls: telephony.activeCalls,
      media: telephony.mediaStats(),
      refused: telephony.refusedCounts(),
      loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e5) / 10,
      loopDelayMaxMs: Math.round(loopDelay.max / 1e5) / 10,
    });
    loopDelay.reset();
  } else if (msg.cmd === 'stop') {
    await t.stop();
    process.exit(0);
  }
}

process.on('message', (m: ParentMessage) => void onParentMessage(m));
process.send!({ ready: true, sipPort: telephony.sipPort });
