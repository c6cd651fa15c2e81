// A real S3-compatible server (s3rver, from npm) on a free loopback port, with one bucket, for the
// S3 recordings store. Its default account is S3RVER/S3RVER; it refuses an unknown access key id
// but, for SigV4, does not check the signature itself (so a wrong secret goes unnoticed here).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The `recordings.s3` configuration block that reaches this server. */
  settings: { endpoint: string; bucket: string; region: string; forcePathStyle: boolean; accessKeyId: string; secretAccessKey: string; keyPrefix: string };
  stop(): Promise<void>;
}

export async function startTestS3(bucket = 'recordings'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'vb-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const addr = await server.run();
  const endpoint = `http://127.0.0.1:${addr.port}`;
  return {
    endpoint,
    bucket,
    settings: { endpoint, bucket, region: 'us-east-1', forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', keyPrefix: '' },
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
