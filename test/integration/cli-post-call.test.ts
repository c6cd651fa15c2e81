// `voxbridge admin post-call policy|consent`: the organization's retention and compliance rules and
// consent recorded later, run as the real compiled command against the test gateway's schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { runCli, type CliResult } from '../helpers/cli.js';

let gw: TestGateway;
let org: TestOrg;
beforeAll(async () => {
  gw = await startTestGateway();
  org = await gw.createOrg({ changes: { features: ['recording'] } });
});
afterAll(async () => {
  await gw?.stop();
});

function cli(...args: string[]): Promise<CliResult> {
  return runCli(gw.config, ['admin', 'post-call', ...args]);
}

describe('voxbridge admin post-call', () => {
  it('sets retention and compliance rules, refusing bad ones', async () => {
    const ok = await cli(
      'policy',
      org.orgId,
      '--retention-days',
      '7',
      '--compliance-rules',
      '{"required_disclosures":["this call is recorded"],"detect_card_numbers":true}',
    );
    expect(ok.code).toBe(0);
    expect(ok.json).toEqual({
      id: org.orgId,
      recording_retention_days: 7,
      compliance_rules: { required_disclosures: ['this call is recorded'], detect_card_numbers: true },
    });
    const bad = await cli('policy', org.orgId, '--compliance-rules', '{"forbidden":["x"]}');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown key 'forbidden'/);
    expect((await cli('policy', org.orgId, '--retention-days', '0')).code).toBe(2);
  }, 240_000);

  it('records consent for a session and refuses unknown statuses and sessions', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', {
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      recording: { enabled: true, consent_required: true },
    });
    const sid = res.body.id;
    const granted = await cli('consent', sid, 'granted');
    expect(granted.code).toBe(0);
    expect(granted.json.recording).toMatchObject({ enabled: true, consent_required: true, consent_status: 'granted' });
    expect((await cli('consent', sid, 'perhaps')).code).toBe(2);
    expect((await cli('consent', 'sess_missing', 'granted')).code).toBe(2);
  }, 240_000);
});
