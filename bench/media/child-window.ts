// The measured window of a bench whose subject runs in a child process (recv-cost.ts, stray-flood.ts,
// ../stream/ws-recv-cost.ts): the child answers 'mark' by restarting its counters and 'stats' with what it
// counted since.
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

/** What a child counted in a window (its subject's events) and the CPU it spent meanwhile, µs. */
export interface WindowStats {
  count: number;
  cpuUs: number;
  systemUs: number;
}

/**
 * The child's side: answers 'mark' by restarting the window and 'stats' with `count()` and the CPU since;
 * 'stop' runs `stop` and exits with the code it returns.
 */
export function answerWindows(send: (m: unknown) => void, count: () => number, stop: () => number): void {
  let mark = { count: count(), cpu: process.cpuUsage() };
  process.on('message', (m: string) => {
    if (m === 'mark') {
      mark = { count: count(), cpu: process.cpuUsage() };
      send('marked');
    } else if (m === 'stats') {
      const cpu = process.cpuUsage(mark.cpu);
      send({ count: count() - mark.count, cpuUs: cpu.user + cpu.system, systemUs: cpu.system } satisfies WindowStats);
    } else if (m === 'stop') {
      process.exit(stop());
    }
  });
}
