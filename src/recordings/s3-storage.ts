// Recordings in an S3-compatible bucket (AWS S3, MinIO, Ceph, s3rver …) through @aws-sdk/client-s3.
// Tested against s3rver (test/integration/recordings-s3-storage.test.ts, api-recordings-s3.test.ts),
// not against AWS itself.
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { RecordingStorage } from './storage.js';

export interface S3StorageOptions {
  /** Empty: AWS's endpoint for `region`. */
  endpoint: string;
  bucket: string;
  region: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  keyPrefix: string;
}

const isNotFound = (err: unknown): boolean =>
  err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');

export class S3Storage implements RecordingStorage {
  private readonly client: S3Client;

  constructor(private readonly opts: S3StorageOptions) {
    this.client = new S3Client({
      endpoint: opts.endpoint || undefined,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      // Plain signed requests: the SDK's default CRC trailers (aws-chunked bodies) are not understood
      // by every S3-compatible server; a checksum is still sent where an operation requires one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  private keyOf(key: string): string {
    return this.opts.keyPrefix + key;
  }

  async put(key: string, src: string): Promise<void> {
    const { size } = await stat(src);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.opts.bucket,
        Key: this.keyOf(key),
        Body: createReadStream(src),
        ContentLength: size,
        ContentType: 'audio/mpeg',
      }),
    );
    await rm(src, { force: true }); // the interface moves the file
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
      return head.ContentLength ?? null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err; // an unreachable store is not a missing recording
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    // The interface hands back a stream at once; the request starts behind it and its failure
    // destroys the stream (the HTTP reply is then cut short, as with a failing disk read).
    const out = new PassThrough();
    this.client
      .send(
        new GetObjectCommand({
          Bucket: this.opts.bucket,
          Key: this.keyOf(key),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
        { abortSignal: abortOnClose(out) },
      )
      .then((res) => {
        if (!(res.Body instanceof Readable)) throw new Error(`S3 GetObject for ${key} returned no stream`);
        // The caller already promised the client this many bytes (Content-Length of a 206).
        if (range && !res.ContentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) {
          res.Body.destroy();
          throw new Error(`S3 GetObject for ${key}: asked for range ${range.start}-${range.end}, got ${res.ContentRange ?? 'the whole object'}`);
        }
        res.Body.on('error', (err) => out.destroy(err));
        res.Body.pipe(out);
        out.once('close', () => res.Body instanceof Readable && res.Body.destroy());
      })
      .catch((err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))));
    return out;
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: this.keyOf(key) }));
    } catch (err) {
      if (!isNotFound(err)) throw err; // S3 answers 204 for a missing key; some servers say 404
    }
  }

  close(): void {
    this.client.destroy();
  }
}

/** Aborts the request when the reader goes away before the response arrives (client hung up). */
function abortOnClose(stream: PassThrough): AbortSignal {
  const ac = new AbortController();
  stream.once('close', () => ac.abort());
  return ac.signal;
}
