// Where encoded recordings live, behind a small interface so a deployment can swap the directory
// for an object store: the directory store (default) or an S3-compatible bucket (s3-storage.ts),
// chosen by `recordings.storage` (RECORDINGS_STORAGE).
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config/index.js';
import { S3Storage } from './s3-storage.js';

export interface RecordingStorage {
  /** Stores the local file `src` under `key` (moves it when possible). */
  put(key: string, src: string): Promise<void>;
  /** Size in bytes, or null when the object is gone. */
  size(key: string): Promise<number | null>;
  /** Bytes `start`..`end` inclusive (the whole object when omitted). */
  read(key: string, range?: { start: number; end: number }): Readable;
  /** Deletes the object; no error when it is already gone. */
  remove(key: string): Promise<void>;
  /** Releases pooled connections (object stores); nothing may be called after it. */
  close?(): void;
}

export class DirectoryStorage implements RecordingStorage {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    const p = path.resolve(this.root, key);
    if (!p.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`storage key escapes the root: ${key}`);
    return p;
  }

  async put(key: string, src: string): Promise<void> {
    const dest = this.pathOf(key);
    await mkdir(path.dirname(dest), { recursive: true });
    try {
      await rename(src, dest);
    } catch {
      await copyFile(src, dest); // another filesystem
      await rm(src, { force: true });
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}

/** The recordings directory of this deployment: WAVs while calls run, MP3s once encoded. */
export function recordingsDir(dataDir: string): string {
  return path.join(dataDir, 'recordings');
}

/** The store this deployment's configuration names. */
export function createRecordingStorage(config: Pick<Config, 'dataDir' | 'recordings'>): RecordingStorage {
  if (config.recordings.storage === 's3') return new S3Storage(config.recordings.s3);
  return new DirectoryStorage(path.join(recordingsDir(config.dataDir), 'mp3'));
}
