// CPU time of one thread of this process from Linux's per-thread accounting (/proc/self/task/<tid>/stat),
// in µs with 10 ms resolution (USER_HZ 100); null where the OS does not tell or the thread has ended.
import { readdirSync, readFileSync } from 'node:fs';

export function threadCpuUs(tid: number | string): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command's closing parenthesis (the command may contain one): utime and stime are fields 14 and 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

/** CPU time (µs) of this process's threads named `name` (their comm), together; null where the OS does not tell. */
export function namedThreadsCpuUs(name: string): number | null {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  let us = 0;
  for (const tid of tids) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    if (comm === name) us += threadCpuUs(tid) ?? 0;
  }
  return us;
}

/** CPU time (µs) of this process's main thread and of all its other threads together, from /proc (Linux). */
export function mainAndOtherThreadsCpuUs(): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    const us = threadCpuUs(tid) ?? 0; // null: the thread ended meanwhile
    if (Number(tid) === process.pid) main += us;
    else others += us;
  }
  return { main, others };
}
