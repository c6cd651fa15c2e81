// The host's CPU time from /proc/stat's first line (every core together, in USER_HZ ticks of 10 ms): what
// was busy, and what the hypervisor took (steal: time a vCPU wanted to run and was not given a physical
// core). A run on a shared VM whose steal is high measured a smaller machine than its core count says.
import { readFileSync } from 'node:fs';

export interface HostCpu {
  /** user + nice + system + irq + softirq, ms. */
  busyMs: number;
  stealMs: number;
  /** Every field, ms. */
  totalMs: number;
}

export function hostCpu(): HostCpu {
  const [, ...f] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f.map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busyMs: busy * 10, stealMs: steal * 10, totalMs: (busy + idle + iowait + steal) * 10 };
}

/** Percent of the host's CPU time between two readings that was busy (any process) and that the hypervisor took. */
export function hostShares(from: HostCpu, to: HostCpu): { busyPercent: number; stealPercent: number } {
  const total = to.totalMs - from.totalMs;
  const share = (ms: number): number => (total > 0 ? Math.round((ms / total) * 1000) / 10 : 0);
  return { busyPercent: share(to.busyMs - from.busyMs), stealPercent: share(to.stealMs - from.stealMs) };
}
