// The recordings path with the S3-compatible store (RECORDINGS_STORAGE=s3) against s3rver, a real
// S3-compatible server on a free port: a captured WAV is encoded to MP3 by the worker's encode job,
// put into the bucket, and served by GET /v1/recordings/{id}/audio whole and with Range (closed,
// open-ended, suffix, unsatisfiable); an object gone from the bucket answers 404; the retention job
// deletes expired objects from the bucket.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../src/media/index.js';
import { newId } from '../../src/ids.js';
import { S3Storage } from '../../src/recordings/index.js';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { decodeMp3, pollUntil } from '../helpers/recordings.js';
import { startTestS3, type TestS3 } from '../helpers/recordings-s3.js';

let s3: TestS3;
let bucket: S3Storage;
let gw: TestGateway;
let org: TestOrg;
let dir: string;
beforeAll(async () => {
  s3 = await startTestS3();
  bucket = new S3Storage(s3.settings);
  gw = await startTestGateway({
    recordings: { storage: 's3', s3: s3.settings },
    postCall: { jobIntervalMs: 500, leaseSeconds: 30, captureGraceSeconds: 5, retentionIntervalMs: 600_000, mp3BitrateKbps: 16 },
  });
  org = await gw.createOrg({ changes: { features: ['recording'] } });
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-rec-s3-'));
});
afterAll(async () => {
  await gw?.stop();
  bucket?.close();
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Two seconds of a 440 Hz tone at 8 kHz, as the recorder would leave it on disk. */
function toneWav(): Buffer {
  const samples = new Int16Array(16_000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return encodeWav(samples, 8000);
}

const audio = (rid: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.httpUrl}/v1/recordings/${rid}/audio`, { headers: { authorization: `Bearer ${org.key}`, ...headers } });

describe('recordings in an S3-compatible bucket', () => {
  it('encodes a captured WAV into the bucket and serves it whole and by byte range', async () => {
    const created = await gw.api(org.key, 'POST', '/v1/sessions', {
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      recording: { enabled: true },
    });
    expect(created.status).toBe(201);
    const sid = created.body.id as string;
    const wav = path.join(dir, `${sid}.wav`);
    await writeFile(wav, toneWav());
    const rid = newId('rec');
    await gw.db.query(
      `INSERT INTO recordings (id, session_id, org_id, channel, status, capture_done, wav_path, expires_at)
       VALUES ($1, $2, $3, 'mixed', 'processing', true, $4, now() + interval '1 day')`,
      [rid, sid, org.orgId, wav],
    );
    gw.recordingEncoder!.kick();
    const rec = await pollUntil(
      async () => {
        const r = await gw.api(org.key, 'GET', `/v1/recordings/${rid}`);
        return r.status === 200 ? r.body : null;
      },
      60_000,
      'recording ready',
    );
    expect(rec).toMatchObject({ status: 'ready', format: 'mp3', download_url: `/v1/recordings/${rid}/audio` });
    // The encoder removes the captured WAV only after `ready` is committed (never lose audio), so wait for it.
    await pollUntil(async () => !existsSync(wav), 30_000, 'captured WAV removed after ready');

    // The MP3 is in the bucket, under the encoder's key, with the size the API reports.
    const key = `${sid}/${rid}.mp3`;
    expect(await bucket.size(key)).toBe(rec.size);

    const whole = await audio(rid);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('audio/mpeg');
    expect(whole.headers.get('content-length')).toBe(String(rec.size));
    const mp3 = Buffer.from(await whole.arrayBuffer());
    expect(mp3.length).toBe(rec.size);
    const decoded = await decodeMp3(mp3);
    expect(decoded.sampleRate).toBe(8000);
    expect(Math.abs(decoded.pcm.length / 8000 - 2)).toBeLessThan(0.2);

    const size = mp3.length;
    const cases: { range: string; start: number; end: number }[] = [
      { range: 'bytes=100-199', start: 100, end: 199 },
      { range: `bytes=${size - 700}-`, start: size - 700, end: size - 1 }, // open-ended
      { range: 'bytes=-300', start: size - 300, end: size - 1 }, // suffix
    ];
    for (const c of cases) {
      const res = await audio(rid, { range: c.range });
      expect(res.status, c.range).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${c.start}-${c.end}/${size}`);
      expect(res.headers.get('content-length')).toBe(String(c.end - c.start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(mp3.subarray(c.start, c.end + 1)), c.range).toBe(true);
    }
    const past = await audio(rid, { range: `bytes=${size + 10}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`);

    // Gone from the bucket (deleted out of band): 404, not a broken stream.
    await bucket.remove(key);
    const gone = await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('recording_not_found');
  });

  it("the retention job deletes an expired recording's object from the bucket", async () => {
    const created = await gw.api(org.key, 'POST', '/v1/sessions', {
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      recording: { enabled: true },
    });
    const sid = created.body.id as string;
    const src = path.join(dir, 'old.mp3');
    await writeFile(src, Buffer.from('old audio'));
    const rid = newId('rec');
    const key = `${sid}/${rid}.mp3`;
    await bucket.put(key, src);
    await gw.db.query(
      `INSERT INTO recordings (id, session_id, org_id, channel, status, size, file_path, expires_at)
       VALUES ($1, $2, $3, 'mixed', 'ready', 9, $4, now() - interval '1 second')`,
      [rid, sid, org.orgId, key],
    );
    expect(await bucket.size(key)).toBe(9);
    expect(await gw.recordingRetention!.sweep()).toContain(rid);
    expect(await bucket.size(key)).toBeNull();
  });
});
