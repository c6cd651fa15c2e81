// Conformance: GET /v1/sessions/{id}/recordings, GET /v1/recordings/{id} and its audio
// (SPEC "Recordings", "Recording object", "Pagination") against real PostgreSQL and Redis.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { newId } from '../../src/ids.js';
import { createRecordingStorage } from '../../src/recordings/index.js';

/** Puts `bytes` into the gateway's recording storage; returns the key to store in file_path. */
async function stored(bytes: Buffer, name: string): Promise<string> {
  const tmp = path.join(dir, `${name}.tmp`);
  await writeFile(tmp, bytes);
  const key = `test/${newId('rec')}_${name}`;
  await createRecordingStorage(gw.config).put(key, tmp);
  return key;
}

let gw: TestGateway;
let org: TestOrg;
let dir: string;
beforeAll(async () => {
  gw = await startTestGateway();
  // Recording access needs the organization's `recording` feature (README "Recordings").
  org = await gw.createOrg({ changes: { features: ['recording'] } });
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-rec-'));
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function newSession(key: string, recording: object = { enabled: true }): Promise<string> {
  const res = await gw.api(key, 'POST', '/v1/sessions', { mode: 'bidirectional_translation', source_language: 'en', target_language: 'es', recording });
  expect(res.status).toBe(201);
  return res.body.id;
}

interface RecOpts {
  status?: string;
  channel?: string;
  file?: string | null;
  size?: number;
  expiresAt?: Date | null;
  message?: string | null;
}

async function addRecording(sessionId: string, orgId: string, o: RecOpts = {}): Promise<string> {
  const id = newId('rec');
  await gw.db.query(
    `INSERT INTO recordings (id, session_id, org_id, channel, status, format, duration, size, file_path, message, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'mp3', 12.5, $6, $7, $8, $9)`,
    [
      id,
      sessionId,
      orgId,
      o.channel ?? 'mixed',
      o.status ?? 'ready',
      o.size ?? null,
      o.file ?? null,
      o.message ?? null,
      o.expiresAt === undefined ? new Date(Date.now() + 86_400_000) : o.expiresAt,
    ],
  );
  return id;
}

const keys = (o: object) => Object.keys(o).sort();

describe('GET /v1/sessions/{id}/recordings', () => {
  it('returns an empty list before recordings exist', async () => {
    const sid = await newSession(org.key);
    const res = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null, url: `/v1/sessions/${sid}/recordings` });
  });

  it('pages forward and backward with limit, starting_after and ending_before; items have exactly the list fields', async () => {
    const sid = await newSession(org.key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await addRecording(sid, org.orgId, { channel: ['agent', 'customer', 'mixed'][i % 3] }));
    const first = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?limit=2`);
    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 2));
    expect(first.body).toMatchObject({ object: 'list', has_more: true, next_cursor: ids[1], url: `/v1/sessions/${sid}/recordings` });
    expect(keys(first.body.data[0])).toEqual(['created_at', 'duration', 'format', 'id', 'object', 'session_id', 'status']);
    expect(first.body.data[0]).toMatchObject({ object: 'recording', session_id: sid, duration: 12.5, format: 'mp3', status: 'ready' });
    const second = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?limit=2&starting_after=${first.body.next_cursor}`);
    expect(second.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(2, 4));
    const last = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?limit=2&starting_after=${second.body.next_cursor}`);
    expect(last.body.data.map((r: { id: string }) => r.id)).toEqual([ids[4]]);
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
    const back = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?limit=2&ending_before=${ids[4]}`);
    expect(back.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(2, 4));
    expect(back.body).toMatchObject({ has_more: true, next_cursor: ids[2] });
    const backEnd = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?limit=2&ending_before=${ids[2]}`);
    expect(backEnd.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 2));
    expect(backEnd.body).toMatchObject({ has_more: false, next_cursor: null });
    expect((await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings`)).body.data).toHaveLength(5);
  });

  it('validates the page query', async () => {
    const sid = await newSession(org.key);
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      [`starting_after=a&ending_before=b`, 'ending_before'],
      ['cursor=x', 'cursor'],
    ]) {
      const res = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'validation_error', code: 'invalid_request', param });
    }
  });

  it("answers 404 session_not_found for another organization's session", async () => {
    const sid = await newSession(org.key);
    await addRecording(sid, org.orgId);
    const other = await gw.createOrg();
    const res = await gw.api(other.key, 'GET', `/v1/sessions/${sid}/recordings`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('session_not_found');
  });
});

describe('GET /v1/recordings/{id}', () => {
  it('returns a ready recording with every field and its download_url', async () => {
    const sid = await newSession(org.key);
    const rid = await addRecording(sid, org.orgId, { size: 2048, file: 'x.mp3' });
    const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}`);
    expect(res.status).toBe(200);
    expect(keys(res.body)).toEqual([
      'bit_depth',
      'channel',
      'created_at',
      'download_url',
      'duration',
      'expires_at',
      'format',
      'id',
      'object',
      'sample_rate',
      'session_id',
      'size',
      'status',
    ]);
    expect(res.body).toMatchObject({
      id: rid,
      object: 'recording',
      session_id: sid,
      channel: 'mixed',
      status: 'ready',
      duration: 12.5,
      format: 'mp3',
      size: 2048,
      sample_rate: 8000,
      bit_depth: 16,
      download_url: `/v1/recordings/${rid}/audio`,
    });
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
  });

  it('answers 202 with the reduced object while processing', async () => {
    const sid = await newSession(org.key);
    const rid = await addRecording(sid, org.orgId, { status: 'processing', channel: 'agent' });
    const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: rid,
      object: 'recording',
      session_id: sid,
      channel: 'agent',
      status: 'processing',
      message: expect.any(String),
      created_at: expect.any(String),
    });
    const audio = await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`);
    expect(audio.status).toBe(202);
    expect(audio.body.status).toBe('processing');
  });

  it('returns a failed recording without download_url; its audio is 404', async () => {
    const sid = await newSession(org.key);
    const rid = await addRecording(sid, org.orgId, { status: 'failed' });
    const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('failed');
    expect(res.body.download_url).toBeUndefined();
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`)).body.error.code).toBe('recording_not_found');
  });

  it("answers 404 recording_not_found for unknown, expired and other organizations' recordings", async () => {
    const sid = await newSession(org.key);
    const expired = await addRecording(sid, org.orgId, { expiresAt: new Date(Date.now() - 1000) });
    const mine = await addRecording(sid, org.orgId);
    const other = await gw.createOrg();
    for (const [key, id] of [
      [org.key, 'rec_00000000000000000000000000'],
      [org.key, expired],
      [other.key, mine],
    ] as const) {
      for (const suffix of ['', '/audio']) {
        const res = await gw.api(key, 'GET', `/v1/recordings/${id}${suffix}`);
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'recording_not_found', param: 'recording_id' });
      }
    }
  });

  it("answers 403 consent_required until the session's consent is granted", async () => {
    const pending = await newSession(org.key, { enabled: true, consent_required: true });
    const denied = await newSession(org.key, { enabled: true, consent_required: true, consent_status: 'denied' });
    const granted = await newSession(org.key, { enabled: true, consent_required: true, consent_status: 'granted' });
    for (const sid of [pending, denied]) {
      const rid = await addRecording(sid, org.orgId);
      for (const suffix of ['', '/audio']) {
        const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}${suffix}`);
        expect(res.status).toBe(403);
        expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'consent_required' });
      }
    }
    const ok = await addRecording(granted, org.orgId);
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${ok}`)).status).toBe(200);
  });
});

describe('GET /v1/recordings/{id}/audio', () => {
  it('streams the file with Content-Type, Content-Length and a filename containing the session id', async () => {
    const sid = await newSession(org.key);
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) & 0xff));
    const file = await stored(bytes, 'mixed.mp3');
    const rid = await addRecording(sid, org.orgId, { file, size: bytes.length });
    const res = await fetch(`${gw.httpUrl}/v1/recordings/${rid}/audio`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename=".*${sid}.*\\.mp3"$`));
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('answers 404 when the file is gone from disk', async () => {
    const sid = await newSession(org.key);
    const rid = await addRecording(sid, org.orgId, { file: 'test/missing.mp3' });
    const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('recording_not_found');
  });
});

describe('organization policy, consent later, retention', () => {
  it("answers 403 recording_not_permitted when the organization lacks the 'recording' feature", async () => {
    const plain = await gw.createOrg();
    const sid = await newSession(plain.key);
    const rid = await addRecording(sid, plain.orgId, { file: await stored(Buffer.from('abc'), 'p.mp3') });
    for (const suffix of ['', '/audio']) {
      const res = await gw.api(plain.key, 'GET', `/v1/recordings/${rid}${suffix}`);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'recording_not_permitted' });
    }
  });

  it('records consent later through POST /v1/sessions/{id}/recording/consent', async () => {
    const sid = await newSession(org.key, { enabled: true, consent_required: true });
    const rid = await addRecording(sid, org.orgId, { file: await stored(Buffer.from('mp3 bytes'), 'c.mp3') });
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`)).body.error.code).toBe('consent_required');
    const granted = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/recording/consent`, { consent_status: 'granted' });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ enabled: true, mode: 'dual_channel', consent_required: true, consent_status: 'granted' });
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${rid}/audio`)).status).toBe(200);
    const denied = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/recording/consent`, { consent_status: 'denied' });
    expect(denied.body.consent_status).toBe('denied');
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${rid}`)).status).toBe(403);
    const bad = await gw.api(org.key, 'POST', `/v1/sessions/${sid}/recording/consent`, { consent_status: 'maybe' });
    expect(bad.status).toBe(400);
    const other = await gw.createOrg();
    expect((await gw.api(other.key, 'POST', `/v1/sessions/${sid}/recording/consent`, { consent_status: 'granted' })).body.error.code).toBe('session_not_found');
  });

  it('refuses a recording mode it does not support, naming the allowed values', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/sessions', {
      mode: 'bidirectional_translation',
      source_language: 'en',
      target_language: 'es',
      recording: { enabled: true, mode: 'stereo' },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toMatch(/dual_channel/);
    expect(JSON.stringify(res.body.error)).toMatch(/mixed/);
  });

  it('the retention job deletes expired audio; expired recordings leave lists and GET', async () => {
    const sid = await newSession(org.key);
    const key = await stored(Buffer.from('old audio'), 'old.mp3');
    const storage = createRecordingStorage(gw.config);
    const kept = await addRecording(sid, org.orgId, { file: await stored(Buffer.from('new audio'), 'new.mp3') });
    const old = await addRecording(sid, org.orgId, { file: key });
    await gw.db.query("UPDATE recordings SET expires_at = now() - interval '1 second' WHERE id = $1", [old]);
    const list = await gw.api(org.key, 'GET', `/v1/sessions/${sid}/recordings`);
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([kept]);
    expect((await gw.api(org.key, 'GET', `/v1/recordings/${old}`)).status).toBe(404);
    expect(await storage.size(key)).not.toBeNull();
    const deleted = await gw.recordingRetention!.sweep();
    expect(deleted).toContain(old);
    expect(deleted).not.toContain(kept);
    expect(await storage.size(key)).toBeNull();
    const { rows } = await gw.db.query('SELECT file_path FROM recordings WHERE id = $1', [old]);
    expect(rows[0].file_path).toBeNull();
  });
});

describe('recording generation failure', () => {
  it('marks a recording with no captured audio failed and writes recording.failed with the SPEC data', async () => {
    const sid = await newSession(org.key);
    await gw.api(org.key, 'POST', `/v1/sessions/${sid}/end`);
    const rid = newId('rec');
    await gw.db.query(
      `INSERT INTO recordings (id, session_id, org_id, channel, status, wav_path, capture_done) VALUES ($1, $2, $3, 'agent', 'processing', $4, true)`,
      [rid, sid, org.orgId, path.join(dir, 'never-written.wav')],
    );
    expect(await gw.recordingEncoder!.sweep()).toContain(rid);
    const res = await gw.api(org.key, 'GET', `/v1/recordings/${rid}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', channel: 'agent' });
    expect(res.body.download_url).toBeUndefined();
    const { rows } = await gw.db.query<{ data: any }>(`SELECT data FROM webhook_events WHERE type = 'recording.failed' AND data->>'session_id' = $1`, [sid]);
    expect(rows.map((r) => r.data)).toEqual([
      { session_id: sid, error: { code: 'recording_generation_failed', message: 'no audio was captured for this recording' } },
    ]);
  });
});
