// SIP test harness: free ports, SIPp runs, a telephony service on an isolated schema with a
// fake session layer that records what the legs hear and say.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { mkdtempSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { packageRoot, type Config } from '../../src/config/index.js';
import { createPool, migrate, createOrg, updateOrg, type Db } from '../../src/store/index.js';
import * as repo from '../../src/store/telephony-repo.js';
import { TelephonyService } from '../../src/telephony/service.js';
import { encryptSecret } from '../../src/secrets/index.js';
import type { SessionAttachment, TelephonySessionPort } from '../../src/telephony/session-port.js';
import type { PartyLeg, PcmFrame } from '../../src/sessions/contracts.js';
import { testConfig, dropTestState, uniqueName } from './gateway.js';
import { defined } from './defined.js';

export const SCENARIOS = path.join(packageRoot, 'sip/scenarios');

async function udpFree(port: number): Promise<boolean> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function tcpFree(port: number): Promise<boolean> {
  const srv = net.createServer();
  return new Promise((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port free for both UDP and TCP (SIP listens on both); even when `even` (RTP). */
export async function freePort(even = false): Promise<number> {
  for (let i = 0; i < 200; i++) {
    // 10000–19999: below every RTP range the tests give gateways, rtpengine and baresip
    // (20000–61000) and the kernel's ephemeral ports, so a parallel test's media socket cannot take
    // the port between this check and SIPp binding it (a SIPp callee would then never answer).
    let port = 10000 + Math.floor(Math.random() * 10000);
    if (even) port -= port % 2;
    if ((await udpFree(port)) && (await tcpFree(port)) && (!even || (await udpFree(port + 1)))) return port;
  }
  throw new Error('no free port');
}

export interface SippResult {
  code: number;
  stdout: string;
  stderr: string;
  errors: string;
  successful: number;
  failed: number;
}

export interface SippOptions {
  scenario: string;
  /** host:port to call; omit for a UAS that waits. */
  target?: string;
  service?: string;
  calls?: number;
  rate?: number;
  rateLimit?: number;
  durationMs?: number;
  transport?: 'u1' | 'un' | 't1' | 'tn';
  keys?: Record<string, string>;
  timeoutSeconds?: number;
  port?: number;
  mediaPort?: number;
  /** Loopback address SIPp binds (default 127.0.0.1): another 127/8 address is another caller. */
  localIp?: string;
  extra?: string[];
}

let sippMediaPortFlags: ((port: number) => string[]) | undefined;

/** SIPp 3.6 (Debian 12) takes `-mp`; 3.7 (Ubuntu 24.04) dropped it for `-min_rtp_port`/`-max_rtp_port`. */
function mediaPortArgs(port: number): string[] {
  if (!sippMediaPortFlags) {
    const version = /v(\d+)\.(\d+)/.exec(spawnSync('sipp', ['-v'], { encoding: 'utf8' }).stdout ?? '');
    const modern = version !== null && (Number(version[1]) > 3 || (Number(version[1]) === 3 && Number(version[2]) >= 7));
    sippMediaPortFlags = modern ? (p) => ['-min_rtp_port', String(p), '-max_rtp_port', String(p)] : (p) => ['-mp', String(p)];
  }
  return sippMediaPortFlags(port);
}

/** Spawns sipp; `done` resolves when it exits (never rejects) with its exit code and counters. */
export async function startSipp(o: SippOptions): Promise<{ port: number; mediaPort: number; done: Promise<SippResult>; kill(): void }> {
  const port = o.port ?? (await freePort());
  const mediaPort = o.mediaPort ?? (await freePort(true));
  const dir = mkdtempSync(path.join(tmpdir(), 'sipp-'));
  const args = [
    ...(o.target ? [o.target] : []),
    '-sf',
    path.join(SCENARIOS, o.scenario),
    '-i',
    o.localIp ?? '127.0.0.1',
    '-p',
    String(port),
    ...mediaPortArgs(mediaPort),
    '-m',
    String(o.calls ?? 1),
    '-r',
    String(o.rate ?? 10),
    '-l',
    String(o.rateLimit ?? o.calls ?? 1),
    '-t',
    o.transport ?? 'u1',
    '-d',
    String(o.durationMs ?? 0),
    '-timeout',
    `${o.timeoutSeconds ?? 30}s`,
    '-timeout_error',
    '-recv_timeout',
    '20000',
    '-trace_err',
    '-error_file',
    path.join(dir, 'errors.log'),
    '-trace_stat',
    '-stf',
    path.join(dir, 'stat.csv'),
    '-nostdin',
    '-key',
    'rtp_port',
    String(o.keys?.rtp_port ?? mediaPort),
    ...(o.service ? ['-s', o.service] : []),
    // Payload types the caller offers, in order (scenarios use [codecs] in m=audio).
    '-key',
    'codecs',
    o.keys?.codecs ?? '8 0 101',
    ...Object.entries(o.keys ?? {})
      .filter(([k]) => k !== 'rtp_port' && k !== 'codecs')
      .flatMap(([k, v]) => ['-key', k, v]),
    ...(o.extra ?? []),
  ];
  const child = spawn('sipp', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<SippResult>((resolve) => {
    child.on('close', (code) => {
      const errors = existsSync(path.join(dir, 'errors.log')) ? readFileSync(path.join(dir, 'errors.log'), 'utf8') : '';
      const { successful, failed } = readStats(dir);
      resolve({ code: code ?? -1, stdout, stderr, errors, successful, failed });
    });
  });
  // A callee (no target) must be listening before anyone dials it: over TCP a dial to a port
  // nobody listens on fails at once instead of being retransmitted as UDP would be.
  if (!o.target) await waitUntilListening(port, (o.transport ?? 'u1').startsWith('t') ? 'tcp' : 'udp', done);
  return { port, mediaPort, done, kill: () => child.kill('SIGINT') };
}

/** True when the kernel lists a socket bound to `port` (TCP: listening), read from /proc without touching the port. */
function isListening(port: number, proto: 'tcp' | 'udp'): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['', '6'].some((v) => {
    const file = `/proc/net/${proto}${v}`;
    if (!existsSync(file)) return false;
    return readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .some((line) => {
        const cols = line.trim().split(/\s+/);
        return cols[1]?.endsWith(`:${hexPort}`) && (proto === 'udp' || cols[3] === '0A');
      });
  });
}

async function waitUntilListening(port: number, proto: 'tcp' | 'udp', exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 20_000;
  while (!isListening(port, proto)) {
    if (gone) return; // sipp failed to start; its result says why
    if (Date.now() > deadline) throw new Error(`sipp did not listen on ${proto} ${port} within 20 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function readStats(dir: string): { successful: number; failed: number } {
  const file = readdirSync(dir)
    .map((f) => path.join(dir, f))
    .find((f) => f.endsWith('stat.csv'));
  if (!file) return { successful: 0, failed: 0 };
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  if (lines.length < 2) return { successful: 0, failed: 0 };
  const head = defined(lines[0], 'sipp stats header').split(';');
  const last = defined(lines[lines.length - 1], 'sipp stats row').split(';');
  const col = (name: string) => Number(last[head.indexOf(name)] ?? 0);
  return { successful: col('SuccessfulCall(C)'), failed: col('FailedCall(C)') };
}

export async function runSipp(o: SippOptions): Promise<SippResult> {
  return (await startSipp(o)).done;
}

export interface AttachedLegRecord {
  sessionId: string;
  leg: PartyLeg;
  frames: PcmFrame[];
  detached: string | null;
}

/** Stands in for sessions/: every open session id accepts legs; records audio. */
export class FakeSessions implements TelephonySessionPort {
  readonly legs: AttachedLegRecord[] = [];
  private waiters: ((r: AttachedLegRecord) => void)[] = [];

  async attachLeg(sessionId: string, leg: PartyLeg): Promise<SessionAttachment | null> {
    const rec: AttachedLegRecord = { sessionId, leg, frames: [], detached: null };
    this.legs.push(rec);
    this.waiters.splice(0).forEach((w) => w(rec));
    return {
      pushAudio: (f) => rec.frames.push(f),
      detach: (reason) => {
        rec.detached = reason;
      },
    };
  }

  nextLeg(): Promise<AttachedLegRecord> {
    return new Promise((r) => this.waiters.push(r));
  }
}

export interface TelephonyFixture {
  config: Config;
  db: Db;
  svc: TelephonyService;
  sessions: FakeSessions;
  sipPort: number;
  orgId: string;
  /** A managed number reachable from 127.0.0.1 (connection with inbound CIDR 127.0.0.0/8). */
  openNumber: string;
  /** A managed number whose connection only admits 10.0.0.0/8. */
  closedNumber: string;
  /** A number whose connection admits nobody by address but authenticates a PBX (user pbx / pass pbxpass). */
  pbxNumber: string;
  createSession(o: { phoneNumber?: string; routing?: Record<string, unknown>; status?: string }): Promise<string>;
  stop(): Promise<void>;
}

export async function startTelephonyFixture(
  o: {
    rtpengineNg?: string | null;
    maxConcurrentCalls?: number;
    rtpTimeoutSeconds?: number;
    sipPort?: number;
    rtpRange?: { min: number; max: number };
    sip?: Record<string, unknown>;
    capture?: Record<string, unknown>;
  } = {},
): Promise<TelephonyFixture> {
  const rtpBase = 30000 + Math.floor(Math.random() * 300) * 100;
  const config = testConfig({
    sip: {
      enabled: true,
      host: '127.0.0.1',
      port: o.sipPort ?? 0,
      transports: ['udp', 'tcp'],
      advertisedAddress: '127.0.0.1',
      rtpPortMin: o.rtpRange?.min ?? rtpBase,
      rtpPortMax: o.rtpRange?.max ?? rtpBase + 998,
      rtpTimeoutSeconds: o.rtpTimeoutSeconds ?? 30,
      maxConcurrentCalls: o.maxConcurrentCalls ?? 500,
      realm: 'voxbridge.test',
      ...o.sip,
    },
    rtpengine: { ng: o.rtpengineNg ?? null, timeoutMs: 2000 },
    ...(o.capture ? { sipCapture: o.capture } : {}),
  });
  await migrate(config.databaseUrl, config.databaseSchema);
  const db = createPool(config.databaseUrl, config.databaseSchema, undefined, 10);
  const org = await createOrg(db, { name: uniqueName('org'), maxConcurrentSessions: 1000, rateLimit: 1000, rateWindowSeconds: 60, features: ['sip'] });
  await updateOrg(db, org.id, { sipEnabled: true });
  const open = await repo.createConnection(db, {
    orgId: org.id,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['127.0.0.0/8'],
  });
  const closed = await repo.createConnection(db, {
    orgId: org.id,
    provider: 'carrier_b',
    host: '10.0.0.1',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['10.0.0.0/8'],
  });
  const pbx = await repo.createConnection(db, {
    orgId: org.id,
    provider: 'carrier_b',
    host: '127.0.0.1',
    port: 5060,
    transport: 'udp',
    inboundCidrs: [],
    username: 'pbx',
    passwordEnc: encryptSecret(config.secretKey, 'pbxpass'),
  });
  const digits = () => String(Math.floor(Math.random() * 1e9)).padStart(9, '0');
  const openNumber = `+1555${digits()}`.slice(0, 12);
  const closedNumber = `+1666${digits()}`.slice(0, 12);
  const pbxNumber = `+1777${digits()}`.slice(0, 12);
  await repo.createPhoneNumber(db, { orgId: org.id, number: openNumber, connectionId: open.id });
  await repo.createPhoneNumber(db, { orgId: org.id, number: closedNumber, connectionId: closed.id });
  await repo.createPhoneNumber(db, { orgId: org.id, number: pbxNumber, connectionId: pbx.id });
  const sessions = new FakeSessions();
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  let svc: TelephonyService;
  try {
    svc = await TelephonyService.start({ config, logger, db, sessions });
  } catch (err) {
    await db.end();
    await dropTestState(config);
    throw err;
  }
  return {
    config,
    db,
    svc,
    sessions,
    sipPort: svc.sipPort,
    orgId: org.id,
    openNumber,
    closedNumber,
    pbxNumber,
    async createSession({ phoneNumber, routing, status }) {
      const id = `sess_${uniqueName('t')}`;
      await db.query(
        `INSERT INTO sessions (id, org_id, status, mode, phone_number, routing, audio, voice, recording)
         VALUES ($1, $2, $3, 'bidirectional_translation', $4, $5, '{}', '{}', '{"enabled":false}')`,
        [id, org.id, status ?? 'created', phoneNumber ?? null, routing ?? (phoneNumber ? { phone_number: phoneNumber } : null)],
      );
      return id;
    },
    async stop() {
      await svc.close();
      await db.end();
      await dropTestState(config);
    },
  };
}

/**
 * The leg that attaches, or an error with SIPp's own account when SIPp ends first (a refused call, a
 * port taken between the free-port probe and SIPp's bind): an awaited leg that never comes would
 * otherwise surface only as the test's timeout, with nothing to say why.
 */
export function attachedBeforeSippEnds(attached: Promise<AttachedLegRecord>, sipp: { done: Promise<SippResult> }): Promise<AttachedLegRecord> {
  const ended = sipp.done.then((r): never => {
    throw new Error(`SIPp ended (exit ${r.code}) before the call attached: ${(r.errors || r.stderr || r.stdout).slice(-2000)}`);
  });
  return Promise.race([attached, ended]);
}

/** Polls until `fn` returns a value (events we cannot subscribe to, e.g. DB rows); generous timeout. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIP settings for a gateway under test: loopback, UDP, 50 RTP port pairs from `rtpBase`. */
export function loopbackSipConfig(rtpBase: number, o: { rtpTimeoutSeconds?: number; maxConcurrentCalls?: number } = {}) {
  return {
    enabled: true,
    host: '127.0.0.1',
    port: 0,
    transports: ['udp'],
    advertisedAddress: '127.0.0.1',
    rtpPortMin: rtpBase,
    rtpPortMax: rtpBase + 98,
    rtpTimeoutSeconds: o.rtpTimeoutSeconds ?? 60,
    maxConcurrentCalls: o.maxConcurrentCalls ?? 50,
    realm: 'voxbridge.test',
  };
}

/** A UDP carrier connection trusted from 127.0.0.1 (where SIPp calls from) and a new number on it. */
export async function addLoopbackNumber(db: Db, orgId: string): Promise<string> {
  const conn = await repo.createConnection(db, {
    orgId,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['127.0.0.1/32'],
  });
  const number = `+1415${String(Date.now()).slice(-7)}`;
  await repo.createPhoneNumber(db, { orgId, number, connectionId: conn.id });
  return number;
}
