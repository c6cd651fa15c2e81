// The S3-compatible recordings store (src/recordings/s3-storage.ts) against a real S3-compatible
// server, s3rver, on a free port: put, size, whole and ranged reads, delete, missing keys, bad keys.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Storage, createRecordingStorage } from '../../src/recordings/index.js';
import { startTestS3, type TestS3 } from '../helpers/recordings-s3.js';

let s3: TestS3;
let store: S3Storage;
let dir: string;
beforeAll(async () => {
  s3 = await startTestS3();
  store = new S3Storage(s3.settings);
  dir = await mkdtemp(path.join(os.tmpdir(), 'vb-s3-store-'));
});
afterAll(async () => {
  store?.close();
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

let n = 0;
/** Writes `bytes` to a temporary file and puts it under a fresh key; returns the key and the source path. */
async function putBytes(target: S3Storage, bytes: Buffer): Promise<{ key: string; src: string }> {
  const src = path.join(dir, `in-${++n}.mp3`);
  await writeFile(src, bytes);
  const key = `2026/11/rec_${n}_${randomBytes(4).toString('hex')}.mp3`;
  await target.put(key, src);
  return { key, src };
}

describe('S3Storage against s3rver', () => {
  const bytes = randomBytes(200_003); // several network chunks, an odd length

  it('puts a file (moving it) and reports its size', async () => {
    const { key, src } = await putBytes(store, bytes);
    expect(existsSync(src)).toBe(false);
    expect(await store.size(key)).toBe(bytes.length);
  });

  it('reads the whole object and byte ranges, inclusive of both ends', async () => {
    const { key } = await putBytes(store, bytes);
    expect((await collect(store.read(key))).equals(bytes)).toBe(true);
    // One byte (not 0-0: s3rver reads an end of 0 as "to the end", which the store then refuses).
    expect((await collect(store.read(key, { start: 7, end: 7 }))).equals(bytes.subarray(7, 8))).toBe(true);
    expect((await collect(store.read(key, { start: 1000, end: 70_999 }))).equals(bytes.subarray(1000, 71_000))).toBe(true);
    // What the route makes of `bytes=150000-` (open-ended) and `bytes=-500` (suffix).
    const last = bytes.length - 1;
    expect((await collect(store.read(key, { start: 150_000, end: last }))).equals(bytes.subarray(150_000))).toBe(true);
    expect((await collect(store.read(key, { start: bytes.length - 500, end: last }))).equals(bytes.subarray(-500))).toBe(true);
  });

  it('deletes an object, and deleting a missing one is no error', async () => {
    const { key } = await putBytes(store, bytes.subarray(0, 1000));
    await store.remove(key);
    expect(await store.size(key)).toBeNull();
    await expect(store.remove(key)).resolves.toBeUndefined();
  });

  it('answers null for the size of a missing key, and a read of it fails the stream', async () => {
    expect(await store.size('no/such/key.mp3')).toBeNull();
    await expect(collect(store.read('no/such/key.mp3'))).rejects.toThrow();
  });

  it('keeps objects under the configured key prefix', async () => {
    const prefixed = new S3Storage({ ...s3.settings, keyPrefix: 'voxbridge/' });
    try {
      const { key } = await putBytes(prefixed, bytes.subarray(0, 321));
      expect(await prefixed.size(key)).toBe(321);
      expect(await store.size(`voxbridge/${key}`)).toBe(321);
      expect(await store.size(key)).toBeNull();
    } finally {
      prefixed.close();
    }
  });

  it('fails, rather than calling the object missing, when the server refuses the credentials', async () => {
    const { key } = await putBytes(store, bytes.subarray(0, 10));
    const wrong = new S3Storage({ ...s3.settings, accessKeyId: 'NOT-AN-ACCOUNT' });
    try {
      await expect(wrong.size(key)).rejects.toThrow();
      await expect(collect(wrong.read(key))).rejects.toThrow();
    } finally {
      wrong.close();
    }
  });

  it('refuses a response that is not the byte range asked for', async () => {
    const { key } = await putBytes(store, bytes.subarray(0, 1000));
    // s3rver answers `bytes=0-0` with the whole object: the store must not pass 1000 bytes on as one.
    await expect(collect(store.read(key, { start: 0, end: 0 }))).rejects.toThrow(/range/);
  });

  it('is the store createRecordingStorage picks for recordings.storage = s3', () => {
    const picked = createRecordingStorage({ dataDir: dir, recordings: { storage: 's3', s3: s3.settings } });
    expect(picked).toBeInstanceOf(S3Storage);
    (picked as S3Storage).close();
  });
});
