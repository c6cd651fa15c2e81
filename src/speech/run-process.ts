// Runs an engine's command-line program off the event loop: input on stdin, output collected from
// stdout, a deadline that kills the whole process group (a shell pipeline included).
import { spawn } from 'node:child_process';
import { SpeechEngineError } from './types.js';

export interface RunProcessOptions {
  binary: string;
  args: string[];
  input: string;
  timeoutMs: number;
  /** Error codes and the name used in messages. */
  failedCode: 'translate_failed' | 'tts_failed';
  timeoutCode: 'translate_timeout' | 'tts_timeout';
  label: string;
}

export function runProcess(o: RunProcessOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(o.binary, o.args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    let err = '';
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      finish(() => reject(new SpeechEngineError(o.timeoutCode, `${o.label} took longer than ${o.timeoutMs} ms`)));
    }, o.timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-500);
    });
    child.on('error', (e) => finish(() => reject(new SpeechEngineError(o.failedCode, `${o.label}: ${e.message}`))));
    child.on('close', (code) =>
      finish(() => (code === 0 ? resolve(Buffer.concat(out)) : reject(new SpeechEngineError(o.failedCode, `${o.label} exited with ${code}: ${err.trim()}`)))),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(o.input);
  });
}
