// Named secrets: `voxbridge admin secret set|list|delete` (the real compiled CLI) on an isolated
// schema, encrypted at rest, resolved per organization then node-wide, and used as an engine key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { secretResolver } from '../../src/secrets/index.js';
import { createEngines } from '../../src/speech/index.js';
import { createOrg, createPool, migrate, type Db } from '../../src/store/index.js';
import { dropTestState, testConfig } from '../helpers/gateway.js';
import { startOpenAiAudioServer, type OpenAiAudioServer } from '../helpers/speech-openai-server.js';
import { runCli, type CliResult } from '../helpers/cli.js';

let config: Config;
let db: Db;
let server: OpenAiAudioServer;
const VALUE = 'sk-live-abcdefghijklmnopqrstuvwxyz012345';

beforeAll(async () => {
  config = testConfig();
  await migrate(config.databaseUrl, config.databaseSchema);
  db = createPool(config.databaseUrl, config.databaseSchema, undefined, 2);
  server = await startOpenAiAudioServer({ apiKey: VALUE });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await db?.end();
  await dropTestState(config);
});

function cli(args: string[], stdin = ''): Promise<CliResult> {
  return runCli(config, args, { stdin });
}

describe('voxbridge admin secret', () => {
  it('stores a value from stdin encrypted, lists names only, resolves org before node-wide, deletes', async () => {
    const org = await createOrg(db, { name: 'Secrets', credits: 10, maxConcurrentSessions: 1, rateLimit: 10, rateWindowSeconds: 60, features: [] });
    const set = await cli(['admin', 'secret', 'set', 'openai-key'], `${VALUE}\n`);
    expect(set.code).toBe(0);
    expect(set.json).toMatchObject({ org_id: null, name: 'openai-key' });
    expect(set.stdout).not.toContain(VALUE);
    const own = await cli(['admin', 'secret', 'set', 'openai-key', '--org', org.id], 'sk-org-own\n');
    expect(own.json).toMatchObject({ org_id: org.id, name: 'openai-key' });

    const { rows } = await db.query('SELECT value_enc FROM secrets');
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.value_enc).toMatch(/^v1:/);
      expect(r.value_enc).not.toContain('sk-');
    }
    const list = await cli(['admin', 'secret', 'list']);
    expect(list.json.data.map((s: { name: string }) => s.name)).toEqual(['openai-key']);
    expect(list.stdout).not.toContain(VALUE);

    const resolve = secretResolver(db, config.secretKey);
    expect(await resolve(org.id, 'openai-key')).toBe('sk-org-own');
    expect(await resolve('org_other', 'openai-key')).toBe(VALUE);
    expect(await resolve(null, 'missing')).toBeNull();

    expect((await cli(['admin', 'secret', 'delete', 'openai-key', '--org', org.id])).json).toMatchObject({ deleted: true });
    expect(await resolve(org.id, 'openai-key')).toBe(VALUE);
    const again = await cli(['admin', 'secret', 'delete', 'openai-key', '--org', org.id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/no secret 'openai-key'/);
    const bad = await cli(['admin', 'secret', 'set', 'bad name'], 'x');
    expect(bad.code).toBe(2);
  }, 240_000);

  it('gives an engine its API key from a named secret (TTS_API_KEY_SECRET)', async () => {
    const engines = await createEngines(
      {
        ...config.engines,
        stt: { ...config.engines.stt, provider: 'none' },
        translate: { ...config.engines.translate, provider: 'none' },
        tts: { ...config.engines.tts, provider: 'openai', url: server.url, apiKeySecret: 'openai-key' },
      },
      { resolveSecret: (name) => secretResolver(db, config.secretKey)(null, name) },
    );
    const pcm = await engines.tts!.synthesize('Hello there.', 'en', {});
    expect(pcm.length).toBeGreaterThan(4000);
    await engines.close();
  }, 60_000);
});
