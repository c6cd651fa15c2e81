// Drives test/helpers/slow-ws-client.py (a streaming client with a 4 KB receive buffer; see there) from a test
// or a bench: starts it on a session's stream URL and collects the audio.output frames it prints, each with
// when it arrived here.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./slow-ws-client.py', import.meta.url));

export interface SlowClientFrame {
  sequence: number;
  timestamp_ms: number;
  /** performance.now() when its line arrived. */
  at: number;
}

export interface SlowClient {
  /** audio.output frames printed while reading, in order. */
  readonly frames: SlowClientFrame[];
  /** Settles when the upgrade was accepted. */
  readonly connected: Promise<void>;
  /** Starts (`read`) or stops (`pause`) reading; it sends the customer's voice either way. */
  command(line: 'read' | 'pause'): void;
  /** Closes the socket and waits for the process to exit. */
  stop(): Promise<void>;
}

export function startSlowClient(wsUrl: string): SlowClient {
  const url = new URL(wsUrl);
  const child = spawn('python3', [SCRIPT, url.hostname, url.port, `${url.pathname}${url.search}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const frames: SlowClientFrame[] = [];
  let onConnected = (): void => undefined;
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as { type: string; sequence: number; timestamp_ms: number };
    if (m.type === 'client.connected') onConnected();
    if (m.type === 'audio.output') frames.push({ sequence: m.sequence, timestamp_ms: m.timestamp_ms, at: performance.now() });
  });
  return {
    frames,
    connected,
    command: (line) => child.stdin.write(`${line}\n`),
    async stop() {
      child.stdin.end('quit\n');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
