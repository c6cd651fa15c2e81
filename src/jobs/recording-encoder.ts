// Recording encode job (DESIGN.md "Data": jobs run from PostgreSQL with SKIP LOCKED): every
// recording whose capture is done — or whose node died mid-call — is encoded to MP3, stored, and
// marked `ready` with `recording.ready`, or `failed` with `recording.failed`. Claims carry a lease,
// so a worker killed while encoding leaves rows another pass resumes: nothing stays `processing`.
import { rm, stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Db } from '../store/index.js';
import { claimRecordingsToEncode, markRecordingFailed, markRecordingReady, releaseRecordingLease, type RecordingRow } from '../store/index.js';
import { encodeMp3, repairWavHeader, wavInfo, type RecordingStorage } from '../recordings/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

/** Attempts before a recording that keeps failing to encode is marked failed. */
export const MAX_ENCODE_ATTEMPTS = 3;

export interface RecordingEncoderDeps {
  db: Db;
  logger: Logger;
  storage: RecordingStorage;
  intervalMs: number;
  leaseSeconds: number;
  captureGraceSeconds: number;
  bitrateKbps: number;
}

export interface RecordingEncoder extends Sweeper {
  /** Runs a pass soon (a session's capture just finished). */
  kick(): void;
}

export function startRecordingEncoder(deps: RecordingEncoderDeps): RecordingEncoder {
  const log = deps.logger.child({ component: 'recording-encoder' });

  async function encodeOne(r: RecordingRow): Promise<void> {
    const wav = r.wav_path;
    try {
      if (!wav || !(await stat(wav).catch(() => null))) throw new Error('no audio was captured for this recording');
      const info = r.capture_done ? await wavInfo(wav) : await repairWavHeader(wav);
      if (info.samples === 0) throw new Error('the recording holds no audio');
      const tmp = `${wav}.mp3.part`;
      await encodeMp3(wav, tmp, deps.bitrateKbps);
      const key = `${r.session_id}/${r.id}.mp3`;
      await deps.storage.put(key, tmp);
      const size = (await deps.storage.size(key)) ?? 0;
      const ready = await markRecordingReady(deps.db, r.id, {
        filePath: key,
        duration: Math.round(info.durationSeconds * 1000) / 1000,
        size,
        sampleRate: 8000,
        bitDepth: 16,
      });
      if (ready) await rm(wav, { force: true });
      log.info({ recording_id: r.id, duration: info.durationSeconds, size }, 'recording ready');
    } catch (err) {
      const message = (err as Error).message;
      if (r.attempts >= MAX_ENCODE_ATTEMPTS || /no audio/.test(message)) {
        log.warn({ recording_id: r.id, err }, 'recording failed');
        await markRecordingFailed(deps.db, r.id, message);
        if (wav) await rm(wav, { force: true });
      } else {
        log.warn({ recording_id: r.id, err, attempt: r.attempts }, 'encoding failed; will retry');
        await releaseRecordingLease(deps.db, r.id);
      }
    }
  }

  const sweeper = startPeriodicSweep(
    deps.intervalMs,
    async (stopped) => {
      const done: string[] = [];
      while (!stopped()) {
        const batch = await claimRecordingsToEncode(deps.db, deps.leaseSeconds, deps.captureGraceSeconds, 4);
        if (batch.length === 0) break;
        for (const r of batch) {
          await encodeOne(r);
          done.push(r.id);
        }
      }
      return done;
    },
    (err) => log.error({ err }, 'recording encode pass failed'),
  );

  // A kick during a pass runs one more pass after it, so rows captured meanwhile are not left to the timer.
  let running = false;
  let pending = false;
  const kick = (): void => {
    if (running) {
      pending = true;
      return;
    }
    running = true;
    sweeper
      .sweep()
      .catch((err) => log.error({ err }, 'recording encode pass failed'))
      .finally(() => {
        running = false;
        if (pending) {
          pending = false;
          kick();
        }
      });
  };
  return { ...sweeper, kick };
}
