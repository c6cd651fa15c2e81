// The gateway the SIP benchmarks' child processes run: server.ts wiring (API, sessions, sockets,
// SIP) with engines off, one organization with a carrier connection allowed from loopback, and
// `prepareSessions(n)`: n numbers, each routed to its own assistive session with a socket token.
import { startStreamGateway } from '../../test/helpers/stream.js';
import * as repo from '../../src/store/telephony-repo.js';
import { updateOrg } from '../../src/store/index.js';
import type { Telephony } from '../../src/telephony/index.js';

export interface BenchSipOptions {
  transports: Array<'udp' | 'tcp'>;
  rtpPortMin: number;
  rtpPortMax: number;
  logLevel: string;
}

/**
 * The test config ignores the environment, so the settings a bench compares are read here: `{ [key]: n }`
 * when the variable `name` is set, else nothing (the test config's value stands).
 */
const envNumber = (name: string, key: string): Record<string, number> => (process.env[name] ? { [key]: Number(process.env[name]) } : {});

export async function startBenchSipGateway(o: BenchSipOptions) {
  const t = await startStreamGateway({
    engines: 'none',
    overrides: {
      roles: ['api', 'media', 'worker'],
      logLevel: o.logLevel,
      // VAD_ENGINE=energy|silero picks the sessions' VAD here
      // (each party stream runs it, so it is part of a call's CPU; the default is the node's, Silero).
      ...(process.env.VAD_ENGINE ? { vad: { engine: process.env.VAD_ENGINE } } : {}),
      // HEAP_GROWING_PERCENT likewise (0: V8's own factor), to compare it with the default.
      ...envNumber('HEAP_GROWING_PERCENT', 'heapGrowingPercent'),
      sip: {
        enabled: true,
        host: '127.0.0.1',
        port: 0,
        transports: o.transports,
        advertisedAddress: '127.0.0.1',
        rtpPortMin: o.rtpPortMin,
        rtpPortMax: o.rtpPortMax,
        rtpTimeoutSeconds: 60,
        maxConcurrentCalls: 5000,
        realm: 'bench',
        // SIP_UDP_RECEIVE_BUFFER_BYTES, likewise read here (the default's trade-off is measured with it).
        ...envNumber('SIP_UDP_RECEIVE_BUFFER_BYTES', 'udpReceiveBufferBytes'),
        // MEDIA_OVERLOAD_LATE_PERCENT, likewise: the calls a node turns away while its media clock runs late.
        ...envNumber('MEDIA_OVERLOAD_LATE_PERCENT', 'overloadLatePercent'),
        ...envNumber('MEDIA_OVERLOAD_LOOP_PERCENT', 'overloadLoopPercent'),
        // SIP_UDP_INGRESS_BUDGET_MS, likewise (0: each datagram handled as it is read).
        ...envNumber('SIP_UDP_INGRESS_BUDGET_MS', 'udpIngressBudgetMs'),
      },
      // WEBHOOKS_FAN_OUT_INTERVAL_MS, likewise.
      webhooks: envNumber('WEBHOOKS_FAN_OUT_INTERVAL_MS', 'fanOutIntervalMs'),
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

  async function prepareSessions(count: number) {
    const sessions = [];
    for (let i = 0; i < count; i++) {
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
    return sessions;
  }

  return { t, telephony, prepareSessions };
}
