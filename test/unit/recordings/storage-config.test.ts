// Choosing the recordings store by configuration: defaults, the RECORDINGS_* environment variables,
// and a start-up error naming what an s3 store lacks.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.js';
import { DirectoryStorage, S3Storage, createRecordingStorage } from '../../../src/recordings/index.js';

const base = { VAD_ENGINE: 'energy' };

describe('recordings storage configuration', () => {
  it('defaults to the directory store', () => {
    const cfg = loadConfig(base);
    expect(cfg.recordings.storage).toBe('directory');
    expect(createRecordingStorage(cfg)).toBeInstanceOf(DirectoryStorage);
  });

  it('reads the S3 settings from RECORDINGS_* variables', () => {
    const cfg = loadConfig({
      ...base,
      RECORDINGS_STORAGE: 's3',
      RECORDINGS_S3_ENDPOINT: 'http://127.0.0.1:9000',
      RECORDINGS_S3_BUCKET: 'calls',
      RECORDINGS_S3_REGION: 'eu-west-1',
      RECORDINGS_S3_ACCESS_KEY_ID: 'AKID',
      RECORDINGS_S3_SECRET_ACCESS_KEY: 'shh',
      RECORDINGS_S3_FORCE_PATH_STYLE: 'false',
      RECORDINGS_S3_KEY_PREFIX: 'vb/',
    });
    expect(cfg.recordings).toEqual({
      storage: 's3',
      s3: {
        endpoint: 'http://127.0.0.1:9000',
        bucket: 'calls',
        region: 'eu-west-1',
        accessKeyId: 'AKID',
        secretAccessKey: 'shh',
        forcePathStyle: false,
        keyPrefix: 'vb/',
      },
    });
    const store = createRecordingStorage(cfg);
    expect(store).toBeInstanceOf(S3Storage);
    (store as S3Storage).close();
  });

  it('refuses s3 without a bucket or credentials, naming their variables', () => {
    expect(() => loadConfig({ ...base, RECORDINGS_STORAGE: 's3' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, RECORDINGS_STORAGE: 's3', RECORDINGS_S3_BUCKET: 'calls' })).toThrow(
      /RECORDINGS_S3_ACCESS_KEY_ID.*RECORDINGS_S3_SECRET_ACCESS_KEY/,
    );
  });

  it('refuses an unknown store', () => {
    expect(() => loadConfig({ ...base, RECORDINGS_STORAGE: 'ftp' })).toThrow(/RECORDINGS_STORAGE/);
  });
});
