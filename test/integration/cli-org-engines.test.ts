// `voxbridge admin org update ORG --stt … --translate … --tts …` (the real compiled CLI): the
// choice is checked before anything is written (unknown provider, missing url, missing secret,
// settings a provider does not read), stored per organization, and `default` clears a stage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { setSecret } from '../../src/secrets/index.js';
import { createOrg, createPool, getOrgEngines, migrate, type Db } from '../../src/store/index.js';
import { dropTestState, testConfig } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';

let config: Config;
let db: Db;

beforeAll(async () => {
  config = testConfig();
  await migrate(config.databaseUrl, config.databaseSchema);
  db = createPool(config.databaseUrl, config.databaseSchema, undefined, 2);
}, 120_000);
afterAll(async () => {
  await db?.end();
  await dropTestState(config);
});

const update = (org: string, ...args: string[]) => runCli(config, ['admin', 'org', 'update', org, ...args]);

describe('voxbridge admin org update: engines', () => {
  it('refuses bad choices with a clear message and writes nothing', async () => {
    const org = await createOrg(db, { name: 'Engines', credits: 10, maxConcurrentSessions: 1, rateLimit: 10, rateWindowSeconds: 60, features: [] });
    const unknown = await update(org.id, '--stt', 'whisperx');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("unknown stt provider 'whisperx'; use one of: pocketsphinx, vosk, openai, deepgram");

    const noUrl = await update(org.id, '--tts', 'openai');
    expect(noUrl.code).not.toBe(0);
    expect(noUrl.stderr).toContain('openai (tts) needs a url');

    const noSecret = await update(org.id, '--stt', 'deepgram', '--stt-url', 'wss://api.deepgram.com', '--stt-secret', 'dg-key');
    expect(noSecret.code).not.toBe(0);
    expect(noSecret.stderr).toContain(`no secret 'dg-key' for organization ${org.id} or node-wide`);

    const stray = await update(org.id, '--translate', 'apertium', '--translate-url', 'http://x', '--tts-voice', 'alloy');
    expect(stray.code).not.toBe(0);
    expect(stray.stderr).toContain('apertium (translate) takes no url');
    expect(stray.stderr).toContain('--tts-* options need --tts <provider>');
    expect(await getOrgEngines(db, org.id)).toBeNull();
  }, 120_000);

  it('stores a valid choice (secret of the organization or node-wide) and clears a stage with default', async () => {
    const org = await createOrg(db, { name: 'Engines2', credits: 10, maxConcurrentSessions: 1, rateLimit: 10, rateWindowSeconds: 60, features: [] });
    await setSecret(db, config.secretKey, org.id, 'dg-key', 'secret-dg');
    await setSecret(db, config.secretKey, null, 'el-key', 'secret-el');
    const ok = await update(
      org.id,
      '--stt',
      'deepgram',
      '--stt-url',
      'wss://api.deepgram.com',
      '--stt-secret',
      'dg-key',
      '--stt-languages',
      'en,es',
      '--translate',
      'apertium',
      '--tts',
      'elevenlabs',
      '--tts-secret',
      'el-key',
      '--tts-voice',
      '21m00Tcm4TlvDq8ikWAM',
    );
    expect(ok.code).toBe(0);
    const stored = {
      stt: { provider: 'deepgram', url: 'wss://api.deepgram.com', apiKeySecret: 'dg-key', languages: ['en', 'es'] },
      translate: { provider: 'apertium' },
      tts: { provider: 'elevenlabs', apiKeySecret: 'el-key', voice: '21m00Tcm4TlvDq8ikWAM' },
    };
    expect(ok.json).toMatchObject({ id: org.id, engines: stored });
    expect(ok.stdout).not.toContain('secret-');
    expect(await getOrgEngines(db, org.id)).toEqual(stored);

    const back = await update(org.id, '--translate', 'default');
    expect(back.code).toBe(0);
    expect(await getOrgEngines(db, org.id)).toEqual({ ...stored, translate: null });
    // Other changes leave the engines alone.
    expect((await update(org.id, '--credits', '5')).code).toBe(0);
    expect(await getOrgEngines(db, org.id)).toEqual({ ...stored, translate: null });
  }, 120_000);
});
