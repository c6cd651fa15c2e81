// Gateway nodes for the scale-out and edge tests: in this process, SIP on UDP on a free port, each its
// own RTP range, engines off; a node started with `shared` uses the first's database schema and Redis
// prefix, so the two form one deployment.
import { startTestGateway, type TestGateway } from './gateway.js';
import { freePort } from './sip-harness.js';
import * as repo from '../../src/store/telephony-repo.js';
import { updateOrg } from '../../src/store/index.js';

const ENGINES_OFF = { stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } };

export async function startSipNode(nodeId: string, o: { shared?: TestGateway; sip?: Record<string, unknown> } = {}): Promise<TestGateway> {
  const httpPort = await freePort();
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  return startTestGateway({
    nodeId,
    roles: ['api', 'media', 'worker'],
    httpPort,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    engines: ENGINES_OFF,
    sip: {
      enabled: true,
      port: 0,
      transports: ['udp'],
      rtpPortMin: rtpBase,
      rtpPortMax: rtpBase + 98,
      maxConcurrentCalls: 50,
      realm: 'voxbridge.test',
      ...o.sip,
    },
    ...(o.shared ? { databaseSchema: o.shared.config.databaseSchema, redisKeyPrefix: o.shared.config.redisKeyPrefix } : {}),
  });
}

/** Nodes behind the Kamailio edge trust its X-VB-Source header. */
export const TRUSTS_THE_EDGE = { trustedEdge: { cidrs: ['127.0.0.1/32'], sourceHeader: 'X-VB-Source' } };

/**
 * Turns SIP on for the organization and adds its carrier, whose calls come from 127.0.0.2 (SIPp binds
 * that address) through the edge.
 */
export async function addEdgeCarrier(gw: TestGateway, orgId: string): Promise<repo.ConnectionRecord> {
  await updateOrg(gw.db, orgId, { sipEnabled: true });
  return repo.createConnection(gw.db, {
    orgId,
    provider: 'carrier_a',
    host: '127.0.0.2',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['127.0.0.2/32'],
  });
}
