// Records one live session while it runs (DESIGN.md "Media": recorder taps write per-channel WAV).
// It listens to the session's `tap` events: `dual_channel` (default) keeps an `agent`, a `customer`
// and a `mixed` channel, `mixed` only the mix. Rows are created (status `processing`, capture not
// done) at the first audio; when the session ends the WAVs are padded to the call's length, closed,
// and the rows handed to the encoder (capture_done).
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { LiveSession, AudioTap } from '../sessions/index.js';
import type { SessionRow } from '../store/index.js';
import { newId } from '../ids.js';
import { insertCapturingRecordings, markCaptureDone, orgFeatures, type Db } from '../store/index.js';
import { TimelineTrack } from './timeline-track.js';

export type RecordingChannel = 'agent' | 'customer' | 'mixed';

/** Accepted `recording.mode` values (the create-session schema enforces the same list). */
export const RECORDING_MODES = { dual_channel: ['agent', 'customer', 'mixed'], mixed: ['mixed'] } as const satisfies Record<string, RecordingChannel[]>;

export interface RecorderDeps {
  db: Db;
  logger: Logger;
  /** Directory for WAVs of calls in progress. */
  wavDir: string;
  /** Called once the WAVs are closed and the rows are ready to encode. */
  captured?: (sessionId: string) => void;
}

/** Org policy: recording needs the organization's `recording` feature (README "Recordings"). */
export function recordingPermitted(orgFeatures: readonly string[]): boolean {
  return orgFeatures.includes('recording');
}

export class CallRecorder {
  private readonly tracks = new Map<RecordingChannel, { id: string; track: TimelineTrack }>();
  private t0Wall = -1;
  private rowsCreated: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private denied = false;

  constructor(
    private readonly session: LiveSession,
    private readonly row: SessionRow,
    private readonly deps: RecorderDeps,
  ) {
    const mode = (row.recording.mode ?? 'dual_channel') as keyof typeof RECORDING_MODES;
    for (const channel of RECORDING_MODES[mode] ?? RECORDING_MODES.dual_channel) {
      const id = newId('rec');
      this.tracks.set(channel, { id, track: new TimelineTrack(path.join(deps.wavDir, `${id}.wav`)) });
    }
    session.onTap(this.onTap);
    session.once('ended', () => void this.finish());
  }

  /** Recording ids by channel (tests). */
  get ids(): Record<string, string> {
    return Object.fromEntries([...this.tracks].map(([c, t]) => [c, t.id]));
  }

  private readonly onTap = (tap: AudioTap): void => {
    if (this.closing) return;
    if (this.t0Wall < 0) {
      this.t0Wall = Date.now() - tap.atMs;
      this.rowsCreated = this.createRows().catch((err) => {
        this.deps.logger.error({ err, session_id: this.row.id }, 'creating recording rows failed');
      });
    }
    if (this.denied) return;
    this.tracks.get(tap.side)?.track.add(tap.atMs, tap.frame);
    this.tracks.get('mixed')?.track.add(tap.atMs, tap.frame);
  };

  private async createRows(): Promise<void> {
    if (!recordingPermitted(await orgFeatures(this.deps.db, this.row.org_id))) {
      this.deps.logger.info({ session_id: this.row.id }, "recording requested but the organization lacks the 'recording' feature: not recorded");
      this.session.onTap(null);
      this.denied = true;
      return;
    }
    await mkdir(this.deps.wavDir, { recursive: true });
    await insertCapturingRecordings(
      this.deps.db,
      this.row.id,
      this.row.org_id,
      [...this.tracks].map(([channel, t]) => ({ id: t.id, channel, wavPath: t.track.path })),
    );
  }

  /** Closes the channels at the call's length and hands them to the encoder. Idempotent. */
  finish(): Promise<void> {
    this.closing ??= (async () => {
      this.session.onTap(null);
      if (this.t0Wall < 0) return; // no audio: nothing was recorded
      const endMs = Date.now() - this.t0Wall;
      await this.rowsCreated;
      const results = await Promise.allSettled([...this.tracks.values()].map((t) => t.track.close(endMs)));
      if (this.denied) {
        await Promise.all([...this.tracks.values()].map((t) => rm(t.track.path, { force: true })));
        return;
      }
      for (const r of results) if (r.status === 'rejected') this.deps.logger.error({ err: r.reason, session_id: this.row.id }, 'closing recording WAV failed');
      // A failed close still hands the row on: the encoder marks it failed (recording.failed).
      await markCaptureDone(
        this.deps.db,
        [...this.tracks.values()].map((t) => t.id),
      );
      this.deps.captured?.(this.row.id);
    })().catch((err) => this.deps.logger.error({ err, session_id: this.row.id }, 'finishing recording failed'));
    return this.closing;
  }
}

/** Attaches a recorder to a live session whose row asks for one (the org policy is checked at the first audio). */
export function attachRecorder(session: LiveSession, row: SessionRow, deps: RecorderDeps): CallRecorder | null {
  if (!row.recording?.enabled) return null;
  return new CallRecorder(session, row, deps);
}
