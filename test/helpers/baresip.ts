// baresip (Debian `baresip-core`) driven headless for interop tests: its own config directory, a
// WAV file as microphone (`aufile`), what it hears written by the `sndfile` filter
// (dump-…-dec.wav), and control over `ctrl_tcp` (netstring JSON commands and call events), so a test
// waits on call state instead of sleeping. Ports are chosen free at start.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, type AttachedLegRecord } from './sip-harness.js';
import { concatPcm } from './speech-audio.js';

export interface BaresipOptions {
  /** 8 kHz mono 16-bit WAV played as the microphone (looped by nothing: make it longer than the call). */
  source: string;
  /** Transport of the account: calls it places and the Contact it gives. */
  transport?: 'udp' | 'tcp' | 'tls';
  /** SDES SRTP (RFC 4568) required on every call (`mediaenc=srtp-mand`). */
  srtp?: boolean;
  /** PEM with certificate and key: baresip then accepts TLS connections (on its SIP port + 1). */
  certificate?: string;
  /** CA file baresip loads for TLS peers. */
  caFile?: string;
  /** User part of the account (baresip answers only requests to its account's user): default `bs`. */
  user?: string;
}

export interface BaresipEvent {
  type: string;
  class?: string;
  direction?: string;
  peeruri?: string;
  param?: string;
  id?: string;
}

export interface Baresip {
  /** SIP over UDP/TCP. */
  readonly sipPort: number;
  /** SIP over TLS (baresip listens on its SIP port + 1). */
  readonly tlsPort: number;
  readonly dir: string;
  /** Sends a ctrl_tcp command (e.g. `dial`, `hangup`); resolves with its response. */
  command(command: string, params?: string): Promise<{ ok: boolean; data: string }>;
  /** The first event of `type` not yet taken (already received or still to come). */
  nextEvent(type: string, timeoutMs?: number): Promise<BaresipEvent>;
  /** All events so far, in order. */
  readonly events: BaresipEvent[];
  /** What baresip has decoded from the far end so far (the sndfile filter's dump), 8 kHz PCM. */
  heard(): Int16Array;
  /** The last part of baresip's console output (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

function udpFree(port: number): Promise<boolean> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function tcpFree(port: number): Promise<boolean> {
  const srv = net.createServer();
  return new Promise((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A base port with `count` consecutive ports free for UDP and TCP. */
async function freeRun(count: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const base = 20000 + 2 * Math.floor(Math.random() * 10000);
    let ok = true;
    for (let p = base; ok && p < base + count; p++) ok = (await udpFree(p)) && (await tcpFree(p));
    if (ok) return base;
  }
  throw new Error('no free port run for baresip');
}

/** Netstring framing of ctrl_tcp: `LEN:JSON,`. */
function netstrings(onMessage: (json: unknown) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const colon = buf.indexOf(0x3a);
      if (colon < 0) return;
      const len = Number(buf.subarray(0, colon).toString('latin1'));
      if (!Number.isInteger(len) || len < 0) throw new Error(`ctrl_tcp: bad netstring length ${buf.subarray(0, colon).toString('latin1')}`);
      if (buf.length < colon + 1 + len + 1) return;
      const body = buf.subarray(colon + 1, colon + 1 + len).toString('utf8');
      buf = buf.subarray(colon + 1 + len + 1);
      onMessage(JSON.parse(body));
    }
  };
}

/** The PCM of a WAV file written by libsndfile, read even while it is still being written. */
export function readWavPcm(file: string): Int16Array {
  const b = readFileSync(file);
  let off = 12;
  while (off + 8 <= b.length) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'data') {
      // The header's size is only final once the file is closed: read what is there.
      const data = b.subarray(off + 8, b.length - ((b.length - off - 8) % 2));
      return new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
    }
    off += 8 + size + (size % 2);
  }
  return new Int16Array(0);
}

export async function startBaresip(o: BaresipOptions): Promise<Baresip> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baresip-'));
  // SIP (UDP+TCP) on base, TLS on base+1 (baresip's rule), ctrl_tcp on base+2, RTP/RTCP from base+4.
  const base = await freeRun(12);
  const sipPort = base;
  const ctrlPort = base + 2;
  const transport = o.transport ?? 'udp';
  const config = [
    'poll_method epoll',
    `sip_listen 127.0.0.1:${sipPort}`,
    // SDP and Contact on loopback, not the machine's first interface.
    'net_interface 127.0.0.1',
    ...(o.certificate ? [`sip_certificate ${o.certificate}`] : []),
    ...(o.caFile ? [`sip_cafile ${o.caFile}`] : []),
    'call_local_timeout 120',
    'call_max_calls 4',
    // No sound card: aubridge is a player nobody reads; what is heard is taken by sndfile before it.
    'audio_player aubridge,nil',
    'audio_alert aubridge,nil',
    `audio_source aufile,${o.source}`,
    `rtp_ports ${base + 4}-${base + 11}`,
    'rtp_timeout 0',
    'module_path /usr/lib/baresip/modules',
    'module g711.so',
    'module aufile.so',
    'module aubridge.so',
    'module sndfile.so',
    ...(o.srtp ? ['module srtp.so'] : []),
    'module_app account.so',
    'module_app menu.so',
    'module_app ctrl_tcp.so',
    `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
    `snd_path ${dir}`,
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'config'), config);
  const account = `<sip:${o.user ?? 'bs'}@127.0.0.1;transport=${transport}>;regint=0;answermode=auto;audio_codecs=pcmu${o.srtp ? ';mediaenc=srtp-mand' : ''}`;
  writeFileSync(path.join(dir, 'accounts'), `${account}\n`);
  writeFileSync(path.join(dir, 'contacts'), '');

  const child: ChildProcess = spawn('baresip', ['-f', dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  const keep = (d: Buffer): void => {
    // The menu module rewrites a call status line (`audio=…`) many times a second: not kept.
    const parts = (partial + d.toString('latin1')).split(/[\r\n]+/);
    partial = parts.pop() ?? '';
    for (const l of parts) if (l.trim() && !l.includes('audio=')) lines.push(l);
    if (lines.length > 2000) lines.splice(0, lines.length - 2000);
  };
  const logText = (): string => lines.join('\n');
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const deadline = Date.now() + 20_000;
  while (!lines.some((l) => l.includes('baresip is ready.'))) {
    if (gone) throw new Error(`baresip exited at start:\n${logText()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`baresip not ready within 20 s:\n${logText()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  const ctrl = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(ctrlPort, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const events: BaresipEvent[] = [];
  const eventWaiters: (() => void)[] = [];
  const responses = new Map<string, (r: { ok: boolean; data: string }) => void>();
  ctrl.on(
    'data',
    netstrings((m) => {
      const msg = m as Record<string, unknown>;
      if (msg.event === true) {
        events.push(msg as unknown as BaresipEvent);
        eventWaiters.splice(0).forEach((w) => w());
      } else if (msg.response === true && typeof msg.token === 'string') {
        responses.get(msg.token)?.({ ok: msg.ok === true, data: typeof msg.data === 'string' ? msg.data : '' });
        responses.delete(msg.token);
      }
    }),
  );
  ctrl.on('error', () => {});
  let token = 0;
  const consumed = new Set<number>();

  return {
    sipPort,
    tlsPort: sipPort + 1,
    dir,
    events,
    command(command, params) {
      const t = String(++token);
      const body = Buffer.from(JSON.stringify({ command, ...(params !== undefined ? { params } : {}), token: t }));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`baresip: no response to ${command}\n${logText()}`)), 15_000);
        responses.set(t, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
        ctrl.write(Buffer.concat([Buffer.from(`${body.length}:`), body, Buffer.from(',')]));
      });
    },
    async nextEvent(type, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const i = events.findIndex((e, k) => !consumed.has(k) && e.type === type);
        const found = events[i];
        if (found) {
          consumed.add(i);
          return found;
        }
        if (gone) throw new Error(`baresip exited while waiting for ${type}:\n${logText()}`);
        const left = end - Date.now();
        if (left <= 0)
          throw new Error(`baresip: no ${type} within ${timeoutMs} ms (events: ${events.map((e) => e.type).join(', ')})\n${lines.slice(-40).join('\n')}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, Math.min(left, 500));
          eventWaiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
    heard() {
      // One call per baresip in these tests: one dump (named by the second the call's audio started).
      const dump = readdirSync(dir).find((f) => f.startsWith('dump-') && f.endsWith('-dec.wav'));
      return dump && existsSync(path.join(dir, dump)) ? readWavPcm(path.join(dir, dump)) : new Int16Array(0);
    },
    log: logText,
    async stop() {
      ctrl.destroy();
      if (!gone) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

// ---- audio checks shared by the baresip tests ------------------------------------------------

export const RATE = 8000;
/** baresip's microphone tone and the gateway's: each side must hear the other's, not its own. */
export const BARESIP_HZ = 450;
export const GATEWAY_HZ = 1000;
/** Half a second of a tone: enough to tell it from noise or a stray frame. */
export const HEARD_BLOCKS = 25;

export function sine(hz: number, samples: number, amplitude: number, phase = 0): Int16Array {
  const f = new Int16Array(samples);
  for (let i = 0; i < samples; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * (phase + i)) / RATE));
  return f;
}

/** An 8 kHz mono 16-bit WAV (baresip's `aufile` microphone). */
export function writeWav(file: string, pcm: Int16Array): void {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + pcm.length * 2, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(RATE, 24);
  h.writeUInt32LE(RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(pcm.length * 2, 40);
  writeFileSync(file, Buffer.concat([h, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}

/** 20 ms blocks in which `hz` carries most of the energy (Goertzel at a bin centre) and that are not silent. */
export function toneBlocks(pcm: Int16Array, hz: number): number {
  const n = 160;
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let count = 0;
  for (let off = 0; off + n <= pcm.length; off += n) {
    let s1 = 0;
    let s2 = 0;
    let energy = 0;
    for (let i = 0; i < n; i++) {
      const x = pcm[off + i] ?? 0;
      energy += x * x;
      const s0 = x + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    // A pure tone at the bin centre gives power = energy * n / 2.
    if (energy / n > 500 * 500 && power / ((energy * n) / 2) > 0.5) count++;
  }
  return count;
}

/**
 * Checks both directions of a connected call: the gateway hears baresip's tone, baresip the
 * gateway's and never its own. `since` (from an earlier check) counts only audio that arrived after
 * it, e.g. to show media still flows after a re-INVITE. Resolves with the new mark.
 */
export async function checkAudio(bs: Baresip, rec: AttachedLegRecord, since: AudioMark = { frames: 0, samples: 0 }): Promise<AudioMark> {
  await gatewayHearsBaresip(bs, rec, since);
  const baresipHeard = () => bs.heard().subarray(since.samples);
  // The gateway speaks in real time, one 20 ms frame per tick, as the session pipeline does.
  let sample = 0;
  const speaker = setInterval(() => {
    rec.leg.playFrame(sine(GATEWAY_HZ, 160, 8000, sample));
    sample += 160;
  }, 20);
  try {
    await eventually(() => toneBlocks(baresipHeard(), GATEWAY_HZ) >= HEARD_BLOCKS, 30_000).catch((e: unknown) => {
      throw new Error(`baresip did not hear the gateway's ${GATEWAY_HZ} Hz (${baresipHeard().length} samples): ${String(e)}\n${bs.log()}`);
    });
  } finally {
    clearInterval(speaker);
  }
  // What baresip heard is the gateway, not an echo of its own microphone.
  const echo = toneBlocks(baresipHeard(), BARESIP_HZ);
  if (echo !== 0) throw new Error(`baresip heard its own ${BARESIP_HZ} Hz in ${echo} blocks\n${bs.log()}`);
  return { frames: rec.frames.length, samples: bs.heard().length };
}

/** One direction only: the gateway hears baresip's tone (in what arrived after `since`). */
export async function gatewayHearsBaresip(bs: Baresip, rec: AttachedLegRecord, since: AudioMark = { frames: 0, samples: 0 }): Promise<AudioMark> {
  const heard = () => concatPcm(...rec.frames.slice(since.frames));
  await eventually(() => toneBlocks(heard(), BARESIP_HZ) >= HEARD_BLOCKS, 30_000).catch((e: unknown) => {
    throw new Error(`gateway did not hear baresip's ${BARESIP_HZ} Hz (${rec.frames.length - since.frames} frames): ${String(e)}\n${bs.log()}`);
  });
  return { frames: rec.frames.length, samples: bs.heard().length };
}

/** How much each side had heard at some point (see checkAudio). */
export interface AudioMark {
  frames: number;
  samples: number;
}
