// An HTTPS receiver on loopback whose certificate the gateway does not trust (self-signed, generated
// with openssl at test time): the attempt fails with a TLS error, is logged and retried (README "Webhooks":
// "anything else (status, timeout, connection error, TLS error) is retried").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/sip-harness.js';
import { insertEvent, withTransaction } from '../../src/store/index.js';

let gw: TestGateway;
let server: https.Server;
let dir: string;
let received = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'wh-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, (_req, res) => {
    received++;
    res.writeHead(200).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  gw = await startTestGateway({ webhooks: { allowLoopbackHttp: true, retryScheduleSeconds: [0.2, 0.2, 0.2], pollIntervalMs: 250 } });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('webhook delivery over TLS', () => {
  it('treats an untrusted certificate as a failed attempt, retries, and fails after the schedule', async () => {
    const org = await gw.createOrg();
    const port = (server.address() as AddressInfo).port;
    const ep = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: `https://127.0.0.1:${port}/hook`, events: ['*'] });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    await withTransaction(gw.db, (c) => insertEvent(c, org.orgId, 'session.created', { id: 'sess_tls', object: 'session' }));
    const log = await eventually(async () => {
      const res = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ep.body.id}/deliveries`);
      return res.body.data.length === 4 ? res.body.data : null;
    }, 30_000);
    expect(log.map((a: any) => a.outcome)).toEqual(['failed', 'retry', 'retry', 'retry']);
    for (const a of log) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/SELF_SIGNED|self[- ]signed|certificate/i);
    }
    // The handshake failed each time: the receiver's handler never ran.
    expect(received).toBe(0);
  });
});
