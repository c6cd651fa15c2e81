// Retention job: audio of recordings past their expires_at (set from the organization's
// recording_retention_days when they became ready) is deleted from storage. The API already hides
// expired recordings (GET 404, lists skip them), so deletion lagging a pass changes nothing visible.
import type { Logger } from 'pino';
import { clearRecordingFile, listExpiredRecordingFiles, type Db } from '../store/index.js';
import type { RecordingStorage } from '../recordings/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export function startRecordingRetention(deps: { db: Db; logger: Logger; storage: RecordingStorage; intervalMs: number }): Sweeper {
  const log = deps.logger.child({ component: 'recording-retention' });
  return startPeriodicSweep(
    deps.intervalMs,
    async (stopped) => {
      const deleted: string[] = [];
      while (!stopped()) {
        const batch = await listExpiredRecordingFiles(deps.db, 100);
        if (batch.length === 0) break;
        for (const r of batch) {
          await deps.storage.remove(r.file_path);
          await clearRecordingFile(deps.db, r.id);
          deleted.push(r.id);
        }
      }
      if (deleted.length) log.info({ deleted: deleted.length }, 'expired recordings deleted');
      return deleted;
    },
    (err) => log.error({ err }, 'retention pass failed'),
  );
}
