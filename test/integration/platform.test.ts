import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

describe('platform endpoints', () => {
  it('answers /healthz and /readyz with PostgreSQL and Redis checked', async () => {
    expect((await gw.api(null, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await gw.api(null, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('serves Prometheus metrics with per-route request counts', async () => {
    await gw.api(null, 'GET', '/healthz');
    const res = await fetch(`${gw.httpUrl}/metrics`);
    const text = await res.text();
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(text).toMatch(/voxbridge_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  });

  it('answers unknown routes with the SPEC error shape and a request id', async () => {
    const res = await gw.api(null, 'GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^req_/);
    expect(res.body).toEqual({ error: { type: 'not_found_error', code: 'route_not_found', message: expect.any(String), request_id: requestId } });
  });

  it('serves the OpenAPI document', async () => {
    const res = await gw.api(null, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.0.3');
  });
});
