// CPU time of the PostgreSQL backends serving this process (Linux /proc only): the sockets this
// process holds to port 5432 give their local ports, and each backend's process title names its
// client's port ("postgres: user db 127.0.0.1(54321) idle"). A setup's database work runs in those
// backends, on the same cores as the gateway, so a cost moved from JavaScript into SQL shows here.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

function ownSocketInodes(): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m?.[1]) out.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Local ports of this process's TCP connections to `remotePort`. */
function ownClientPorts(remotePort: number): Set<number> {
  const inodes = ownSocketInodes();
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const local = f[1];
      const remote = f[2];
      const inode = f[9];
      if (!local || !remote || !inode || !inodes.has(inode)) continue;
      if (parseInt(remote.split(':')[1] ?? '', 16) === remotePort) ports.add(parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

function cpuMsOf(pid: string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at ") ".
  const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU ms per backend pid serving this process now. */
export function pgBackendCpu(pgPort = 5432): Map<string, number> {
  const ports = ownClientPorts(pgPort);
  const out = new Map<string, number>();
  if (ports.size === 0) return out;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres:')) continue;
      const m = /\((\d+)\)/.exec(title);
      if (m?.[1] && ports.has(Number(m[1]))) out.set(pid, cpuMsOf(pid));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** CPU ms the backends spent between two readings (backends that appeared count from zero). */
export function pgCpuDelta(before: Map<string, number>, after: Map<string, number>): number {
  let ms = 0;
  for (const [pid, v] of after) ms += v - (before.get(pid) ?? 0);
  return ms;
}
