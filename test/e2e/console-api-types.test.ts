// The console's typed API calls (web/src/api/v1.d.ts) are generated from /v1/openapi.json; this
// checks the committed file still matches what a running gateway documents, so a route change that
// would break the console's calls fails here (regenerate with `npm run web:types -- <url>`).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderWebTypes, WEB_TYPES_FILE } from '../../scripts/web-types.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

it('the committed console API types equal those generated from the running gateway\'s OpenAPI document', async () => {
  const doc = await (await fetch(`${gw.httpUrl}/v1/openapi.json`)).json();
  expect(Object.keys(doc.paths)).toContain('/console/api/auth/sign_in');
  expect(readFileSync(WEB_TYPES_FILE, 'utf8')).toBe(await renderWebTypes(doc));
});
