// `voxbridge admin webhook …`: the real compiled command against an isolated schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropTestState, testConfig } from '../helpers/gateway.js';
import type { Config } from '../../src/config/index.js';
import { runCli, type CliResult } from '../helpers/cli.js';

let config: Config;
beforeAll(() => {
  config = testConfig();
});
afterAll(async () => {
  await dropTestState(config);
});

function cli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runCli(config, args, { env });
}

const DEV = { WEBHOOKS_ALLOW_LOOPBACK_HTTP: 'true' };
const SLOW = 240_000;

describe('voxbridge admin webhook', () => {
  it(
    'adds, lists, rotates, disables and shows deliveries',
    async () => {
      const org = await cli({}, 'admin', 'org', 'create', '--name', 'hooks');
      expect(org.code, org.stderr).toBe(0);
      const added = await cli(
        DEV,
        'admin',
        'webhook',
        'add',
        '--org',
        org.json.id,
        '--url',
        'http://127.0.0.1:9/in',
        '--events',
        'session.ended,recordings',
        '--realtime',
      );
      expect(added.code, added.stderr).toBe(0);
      expect(added.json).toMatchObject({
        object: 'webhook_endpoint',
        org_id: org.json.id,
        events: ['session.ended', 'recordings'],
        realtime: true,
        enabled: true,
      });
      expect(added.json.id).toMatch(/^wh_/);
      expect(added.json.secret).toMatch(/^whsec_/);

      const listed = await cli({}, 'admin', 'webhook', 'list', '--org', org.json.id);
      expect(listed.json.data.map((e: any) => e.id)).toEqual([added.json.id]);
      expect(listed.json.data[0].secret).toBeUndefined();

      const rotated = await cli({}, 'admin', 'webhook', 'rotate-secret', added.json.id);
      expect(rotated.json.secret).toMatch(/^whsec_/);
      expect(rotated.json.secret).not.toBe(added.json.secret);

      const disabled = await cli({}, 'admin', 'webhook', 'disable', added.json.id);
      expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: 'disabled by an operator' });

      const deliveries = await cli({}, 'admin', 'webhook', 'deliveries', added.json.id);
      expect(deliveries.code, deliveries.stderr).toBe(0);
      expect(deliveries.json).toMatchObject({ object: 'list', data: [], has_more: false });
    },
    SLOW,
  );

  it(
    'refuses what the API refuses, on stderr with exit 2',
    async () => {
      const org = await cli({}, 'admin', 'org', 'create', '--name', 'hooks2');
      const plainHttp = await cli({}, 'admin', 'webhook', 'add', '--org', org.json.id, '--url', 'http://127.0.0.1:9/in', '--events', '*');
      expect(plainHttp.code).toBe(2);
      expect(plainHttp.stderr).toMatch(/--url: url must use https/);
      const badEvents = await cli(DEV, 'admin', 'webhook', 'add', '--org', org.json.id, '--url', 'http://127.0.0.1:9/in', '--events', 'nope');
      expect(badEvents.code).toBe(2);
      expect(badEvents.stderr).toMatch(/--events: unknown/);
      const missing = await cli({}, 'admin', 'webhook', 'disable', 'wh_missing');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/no webhook endpoint wh_missing/);
    },
    SLOW,
  );
});
