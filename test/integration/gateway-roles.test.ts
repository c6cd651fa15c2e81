// server.ts serves the roles it is given: api (/v1 resources), media (engines, sockets, SIP), worker.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defined } from '../helpers/defined.js';

const NO_ENGINES = { engines: { stt: { provider: 'none' }, translate: { provider: 'none' }, tts: { provider: 'none' } } };

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** Sends a SIP OPTIONS over UDP and resolves with the status line of the answer. */
function sipOptions(port: number): Promise<string> {
  const sock = dgram.createSocket('udp4');
  const msg = [
    `OPTIONS sip:probe@127.0.0.1:${port} SIP/2.0`,
    'Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-roles-1;rport',
    'Max-Forwards: 70',
    'From: <sip:probe@127.0.0.1>;tag=r1',
    `To: <sip:probe@127.0.0.1:${port}>`,
    'Call-ID: roles-options-1',
    'CSeq: 1 OPTIONS',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error('no answer to OPTIONS'));
    }, 20_000);
    sock.on('message', (data) => {
      clearTimeout(timer);
      sock.close();
      resolve(defined(data.toString().split('\r\n')[0], 'status line'));
    });
    sock.bind(0, '127.0.0.1', () => sock.send(msg, port, '127.0.0.1'));
  });
}

describe('gateway roles', () => {
  it('with every role serves /v1, the SIP front (OPTIONS answered) and its metrics', async () => {
    gw = await startTestGateway({ roles: ['api', 'media', 'worker'], ...NO_ENGINES });
    expect(gw.telephony).toBeDefined();
    expect(gw.stream).toBeDefined();
    expect(await sipOptions(gw.telephony!.sipPort)).toBe('SIP/2.0 200 OK');
    const org = await gw.createOrg();
    expect((await gw.api(org.key, 'GET', '/v1/agents')).status).toBe(200);
    const metrics = await (await fetch(`${gw.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/^voxbridge_sip_active_calls 0$/m);
  });

  it('with the media role alone serves no /v1 resources', async () => {
    gw = await startTestGateway({ roles: ['media'], ...NO_ENGINES });
    const org = await gw.createOrg();
    const res = await gw.api(org.key, 'GET', '/v1/agents');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
    expect(gw.sweeper).toBeUndefined();
  });
});
