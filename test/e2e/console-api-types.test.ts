// The console's typed API calls are generated from the gateway's OpenAPI documents: web/src/api/v1.d.ts
// from /v1/openapi.json (only /v1, the SPEC contract) and web/src/api/console.d.ts from
// /console/api/openapi.json (the console's own routes). This checks the committed files still match
// what a running gateway documents, so a route change that would break the console's calls fails
// here (regenerate with `npm run web:types -- <gateway url>`).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderWebTypes, WEB_TYPES_SOURCES } from '../../scripts/web-types.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

it('/v1/openapi.json documents only /v1; the console routes are in /console/api/openapi.json', async () => {
  const v1 = await (await fetch(`${gw.httpUrl}/v1/openapi.json`)).json();
  const v1Paths = Object.keys(v1.paths);
  expect(v1Paths).toContain('/v1/sessions');
  expect(v1Paths.filter((p) => !p.startsWith('/v1/'))).toEqual([]);
  expect(v1.paths['/v1/sessions'].get).toBeUndefined(); // SPEC: no list-sessions endpoint

  const res = await fetch(`${gw.httpUrl}/console/api/openapi.json`);
  expect(res.status).toBe(200);
  const consoleDoc = await res.json();
  const consolePaths = Object.keys(consoleDoc.paths);
  expect(consolePaths).toEqual(expect.arrayContaining(['/console/api/auth/sign_in', '/console/api/sessions']));
  expect(consolePaths.filter((p) => !p.startsWith('/console/api/'))).toEqual([]);
  expect(consoleDoc.components.securitySchemes.cookie).toMatchObject({ type: 'apiKey', in: 'cookie' });
});

it("the committed console API types equal those generated from the running gateway's OpenAPI documents", async () => {
  for (const { file, docPath } of WEB_TYPES_SOURCES) {
    const doc = await (await fetch(`${gw.httpUrl}${docPath}`)).json();
    expect(readFileSync(file, 'utf8'), file).toBe(await renderWebTypes(doc, docPath));
  }
});
