// Starts rtpengine (Debian rtpengine-daemon) on loopback in userspace mode for a test file:
// free ng port and RTP range, foreground, pid tracked, killed after.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { freePort } from './sip-harness.js';

export interface RtpengineHandle {
  ng: string;
  portMin: number;
  portMax: number;
  pid: number;
  stop(): Promise<void>;
}

/** Sends an ng `ping` (bencoded) and resolves on `pong`. */
function ngPing(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      resolve(false);
    }, timeoutMs);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m.toString().includes('pong'));
    });
    s.send(Buffer.from('c1 d7:command4:pinge'), port, '127.0.0.1');
  });
}

export async function startRtpengine(): Promise<RtpengineHandle> {
  const ngPort = await freePort();
  const base = 46000 + Math.floor(Math.random() * 150) * 100;
  const args = [
    '--config-file=none',
    '--table=-1',
    '--interface=127.0.0.1',
    `--listen-ng=127.0.0.1:${ngPort}`,
    `--port-min=${base}`,
    `--port-max=${base + 99}`,
    '--foreground',
    '--log-stderr',
    '--log-level=4',
  ];
  const child: ChildProcess = spawn('rtpengine', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`rtpengine exited: ${stderr}`);
    if (await ngPing(ngPort, 300)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`rtpengine did not answer ng ping: ${stderr}`);
    }
  }
  return {
    ng: `127.0.0.1:${ngPort}`,
    portMin: base,
    portMax: base + 99,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}
