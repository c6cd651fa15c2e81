// The measured window of a bench whose subject runs in a child process (recv-cost.ts, stray-flood.ts):
// the child answers 'mark' by restarting its counters and 'stats' with what it counted since.
import type { ChildProcess } from 'node:child_process';

/** The child's next IPC message. */
export function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
}

/** Warms up for a second, has the child mark, waits `seconds`, and returns the child's stats for the window. */
export async function measureWindow<T>(child: ChildProcess, seconds: number): Promise<T> {
  await new Promise((r) => setTimeout(r, 1000));
  child.send('mark');
  await nextMessage(child);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  child.send('stats');
  return nextMessage<T>(child);
}
