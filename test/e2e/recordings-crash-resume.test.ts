// Nothing stays `processing` forever: a worker killed with SIGKILL while lame encodes leaves a
// leased row that the next worker resumes once the lease runs out; a node that died mid-call leaves
// a WAV with a provisional header that is repaired and encoded after the capture grace.
// Workers are real `voxbridge serve --roles worker` processes (npm run build first).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile, open, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { pollUntil } from '../helpers/recordings.js';
import { encodeWav } from '../../src/media/index.js';
import { newId } from '../../src/ids.js';

let gw: TestGateway;
let org: TestOrg;
let dataDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'vb-crash-'));
  // The control plane only: the encoders under test are the child workers.
  gw = await startTestGateway({ roles: ['api'], dataDir });
  org = await gw.createOrg({ changes: { features: ['recording'] } });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await gw?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

function startWorker(leaseSeconds: number): ChildProcess {
  const c = gw.config;
  const child = spawn(process.execPath, ['bin/voxbridge.js', 'serve', '--roles', 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: c.databaseUrl,
      DATABASE_SCHEMA: c.databaseSchema,
      REDIS_URL: c.redisUrl,
      REDIS_KEY_PREFIX: c.redisKeyPrefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      SIP_ENABLED: 'false',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      POSTCALL_JOB_INTERVAL_MS: '200',
      POSTCALL_LEASE_SECONDS: String(leaseSeconds),
      RECORDING_CAPTURE_GRACE_SECONDS: '2',
    },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

/** Noise (so lame has work to do) of `seconds` at 8 kHz. */
function noise(seconds: number): Int16Array {
  const pcm = new Int16Array(seconds * 8000);
  let x = 12345;
  for (let i = 0; i < pcm.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    pcm[i] = ((x >> 8) % 16000) - 8000;
  }
  return pcm;
}

async function endedSessionWithRecording(wav: Buffer, captureDone: boolean): Promise<{ sid: string; rid: string }> {
  const res = await gw.api(org.key, 'POST', '/v1/sessions', {
    mode: 'bidirectional_translation',
    source_language: 'en',
    target_language: 'es',
    recording: { enabled: true },
  });
  const sid = res.body.id as string;
  await gw.api(org.key, 'POST', `/v1/sessions/${sid}/end`);
  const rid = newId('rec');
  const wavPath = path.join(dataDir, `${rid}.wav`);
  await writeFile(wavPath, wav);
  await gw.db.query(
    `INSERT INTO recordings (id, session_id, org_id, channel, status, wav_path, capture_done) VALUES ($1, $2, $3, 'mixed', 'processing', $4, $5)`,
    [rid, sid, org.orgId, wavPath, captureDone],
  );
  return { sid, rid };
}

const row = async (rid: string) => (await gw.db.query('SELECT * FROM recordings WHERE id = $1', [rid])).rows[0];

describe('recording encode crash and resume', () => {
  it('a worker killed (SIGKILL) during encoding leaves the row to the next worker, which makes it ready once', async () => {
    const seconds = 20 * 60;
    const { rid } = await endedSessionWithRecording(encodeWav(noise(seconds), 8000), true);
    const first = startWorker(4);
    // Wait until the first worker holds the row (lame is running), then kill it outright.
    await pollUntil(async () => (await row(rid)).lease_until !== null, 60_000, 'the first worker claims the recording');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const afterKill = await row(rid);
    expect(afterKill.status).toBe('processing');
    expect(afterKill.attempts).toBe(1);

    startWorker(30);
    const done = await pollUntil(
      async () => {
        const r = await row(rid);
        return r.status !== 'processing' ? r : null;
      },
      120_000,
      'the second worker finishes the recording',
    );
    expect(done.status).toBe('ready');
    expect(done.attempts).toBe(2);
    expect(done.duration).toBeCloseTo(seconds, 1);
    expect(Number(done.size)).toBeGreaterThan(1000);
    const { rows } = await gw.db.query(`SELECT data FROM webhook_events WHERE type = 'recording.ready' AND data->>'id' = $1`, [rid]);
    expect(rows).toHaveLength(1);
    const res = await fetch(`${gw.httpUrl}/v1/recordings/${rid}/audio`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(Number(done.size));
  }, 240_000);

  it('a WAV left mid-call by a dead node (header sizes 0) is repaired and encoded after the capture grace', async () => {
    const wav = encodeWav(noise(7), 8000);
    wav.writeUInt32LE(36, 4); // the provisional header a streaming writer leaves until close
    wav.writeUInt32LE(0, 40);
    const { rid } = await endedSessionWithRecording(wav, false);
    startWorker(30);
    const done = await pollUntil(
      async () => {
        const r = await row(rid);
        return r.status !== 'processing' ? r : null;
      },
      120_000,
      'the recording is encoded',
    );
    expect(done.status).toBe('ready');
    expect(done.duration).toBeCloseTo(7, 2);
    const fh = await open(path.join(dataDir, 'recordings', 'mp3', done.file_path));
    await fh.close();
    expect((await stat(path.join(dataDir, 'recordings', 'mp3', done.file_path))).size).toBe(Number(done.size));
  }, 180_000);
});
