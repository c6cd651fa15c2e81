// The gateway under test for the concurrent-calls benchmark, in its own process (own event loop
// and CPU accounting): server.ts wiring with the media role, SIP on a free port, engines off.
// IPC: {cmd:'prepare', calls} → {sessions:[{number,id,token}]}; {cmd:'usage'} → cpu/memory;
// {cmd:'dial', sessionId, to} → {ok} | {error} (an agent leg dialled out, bench/media); {cmd:'stop'}.
import { startStreamGateway } from '../../test/helpers/stream.js';
import * as repo from '../../src/store/telephony-repo.js';
import { updateOrg } from '../../src/store/index.js';
import type { Telephony } from '../../src/telephony/index.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mediaStageSummary } from '../../src/media/index.js';

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();

const rtpBase = 20000;
const t = await startStreamGateway({
  engines: 'none',
  overrides: {
    roles: ['api', 'media', 'worker'],
    logLevel: 'warn',
    sip: {
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      transports: ['udp'],
      advertisedAddress: '127.0.0.1',
      rtpPortMin: rtpBase,
      rtpPortMax: rtpBase + 9998,
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
  sessionId?: string;
  to?: string;
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
      sessions.push({ number, id, token, wsUrl: t.wsUrl(id, token) });
    }
    process.send!({ sessions });
  } else if (msg.cmd === 'usage') {
    process.send!({
      stages: await mediaStageSummary(),
      cpu: process.cpuUsage(),
      rss: process.memoryUsage().rss,
      heapUsed: process.memoryUsage().heapUsed,
      activeCalls: telephony.activeCalls,
      media: {
        ...telephony.mediaStats(),
        loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e5) / 10,
        loopDelayMaxMs: Math.round(loopDelay.max / 1e5) / 10,
      },
    });
    loopDelay.reset();
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

// A rejected handler would be an unhandled rejection: the handler catches, the listener discards.
process.on('message', (m: ParentMessage) => void onParentMessage(m));
process.send!({ ready: true, sipPort: telephony.sipPort });
