// Starts the Kamailio edge (sip/kamailio/) for a test file: the config rendered by the same
// render.sh deployments use, on free loopback ports, in the foreground with its own runtime dir,
// killed after. Ready once it answers an OPTIONS to itself.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/config/index.js';
import * as repo from '../../src/store/telephony-repo.js';
import { freePort, type TelephonyFixture } from './sip-harness.js';
import { udpExchange } from './sip-raw.js';

export interface KamailioOptions {
  /** voxbridge nodes as host:port, in priority order (dispatchAlg 8 always takes the first live one). */
  nodes: string[];
  /** The edge's SIP port (UDP and TCP); a free one when absent (nodes that dial through the edge need it first). */
  port?: number;
  rtpengine?: string;
  tls?: {
    cert: string;
    key: string;
    /** EDGE_TLS_CLIENT_CA: certificates asked for (not required) on the main TLS port, verified against it. */
    clientCa?: string;
    /** EDGE_TLS_TRUNKS: one TLS port per CA file, each requiring a client certificate it issued. */
    trunkCas?: string[];
    /** EDGE_TLS_CARRIER_CA: what a carrier dialled over TLS must chain to (the render default: the system CAs). */
    carrierCa?: string;
  };
  pikePeriod?: number;
  pikeDensity?: number;
  banSeconds?: number;
  /** Dispatcher algorithm: 4 round robin (default), 8 by priority (list order). */
  dispatchAlg?: number;
  /** EDGE_PING_INTERVAL: seconds between the dispatcher's OPTIONS probes (the render default: 10). */
  pingIntervalSeconds?: number;
  /** EDGE_CARRIERS: carrier groups for nodes dialling through the edge, name → gateways (host:port) in priority order. */
  carriers?: Record<string, string[]>;
}

export interface KamailioHandle {
  port: number;
  tlsPort: number | null;
  /** The mutual-TLS trunk ports, in the order of `tls.trunkCas`. */
  trunkPorts: number[];
  dir: string;
  stop(): Promise<void>;
  /** What Kamailio logged so far (for assertion messages). */
  log(): string;
}

const RENDER = path.join(packageRoot, 'sip/kamailio/render.sh');

export async function startKamailio(o: KamailioOptions): Promise<KamailioHandle> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kamailio-'));
  const port = o.port ?? (await freePort());
  const tlsPort = o.tls ? await freePort() : null;
  const trunkPorts: number[] = [];
  for (const _ of o.tls?.trunkCas ?? []) trunkPorts.push(await freePort());
  const trunks = (o.tls?.trunkCas ?? []).map((ca, i) => `${trunkPorts[i]}=${ca}`).join(',');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    EDGE_LISTEN: '127.0.0.1',
    EDGE_PORT: String(port),
    EDGE_NODES: o.nodes.join(','),
    EDGE_CHILDREN: '2',
    EDGE_PIKE_PERIOD: String(o.pikePeriod ?? 2),
    EDGE_PIKE_DENSITY: String(o.pikeDensity ?? 200),
    EDGE_BAN_SECONDS: String(o.banSeconds ?? 60),
    EDGE_DISPATCH_ALG: String(o.dispatchAlg ?? 4),
    ...(o.pingIntervalSeconds !== undefined ? { EDGE_PING_INTERVAL: String(o.pingIntervalSeconds) } : {}),
    ...(o.rtpengine ? { EDGE_RTPENGINE: o.rtpengine } : {}),
    ...(o.tls && tlsPort ? { EDGE_TLS_CERT: o.tls.cert, EDGE_TLS_KEY: o.tls.key, EDGE_TLS_PORT: String(tlsPort) } : {}),
    ...(o.tls?.clientCa ? { EDGE_TLS_CLIENT_CA: o.tls.clientCa } : {}),
    ...(o.tls?.carrierCa ? { EDGE_TLS_CARRIER_CA: o.tls.carrierCa } : {}),
    ...(trunks ? { EDGE_TLS_TRUNKS: trunks } : {}),
    ...(o.carriers
      ? {
          EDGE_CARRIERS: Object.entries(o.carriers)
            .map(([name, gws]) => `${name}=${gws.join(',')}`)
            .join(' '),
        }
      : {}),
  };
  const rendered = spawnSync('bash', [RENDER, dir], { env, encoding: 'utf8' });
  if (rendered.status !== 0) throw new Error(`render.sh failed: ${rendered.stderr}`);
  const cfg = path.join(dir, 'kamailio.cfg');
  const child: ChildProcess = spawn(
    'kamailio',
    ['-DD', '-E', '-f', cfg, '-Y', path.join(dir, 'run'), '-P', path.join(dir, 'run', 'kamailio.pid'), '-m', '48', '-M', '8'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
    if (stderr.length > 2_000_000) stderr = stderr.slice(-1_000_000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  const ping = `OPTIONS sip:127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-ready-{{n}};rport\r\nFrom: <sip:probe@127.0.0.1>;tag=probe\r\nTo: <sip:127.0.0.1:${port}>\r\nCall-ID: ready-{{n}}@test\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`;
  const deadline = Date.now() + 30_000;
  for (let n = 0; ; n++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`kamailio exited: ${stderr.slice(-4000)}`);
    const rs = await udpExchange(port, ping.replaceAll('{{n}}', String(n)), 500);
    if (rs?.status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kamailio did not answer OPTIONS: ${stderr.slice(-4000)}`);
    }
  }
  return { port, tlsPort, trunkPorts, dir, stop, log: () => stderr };
}

/**
 * A TLS carrier connection whose calls need a client certificate from `caFile` with subject
 * carrier.test (the node checks what the edge vouches for), and a new number on it.
 */
export function addMtlsTrunkNumber(fx: TelephonyFixture, caFile: string): Promise<string> {
  return addTlsTrunkNumber(fx, { requireClientCert: true, tlsClientCa: readFileSync(caFile, 'utf8'), tlsClientSubject: 'carrier.test' });
}

/** A TLS carrier connection that requires TLS signalling and SRTP media (`--require-secure`), and a new number on it. */
export function addSecureTrunkNumber(fx: TelephonyFixture): Promise<string> {
  return addTlsTrunkNumber(fx, { requireSecure: true });
}

async function addTlsTrunkNumber(fx: TelephonyFixture, security: repo.ConnectionSecurity): Promise<string> {
  const conn = await repo.createConnection(fx.db, {
    orgId: fx.orgId,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5061,
    transport: 'tls',
    inboundCidrs: ['127.0.0.0/8'],
    security,
  });
  const number = `+1888${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  await repo.createPhoneNumber(fx.db, { orgId: fx.orgId, number, connectionId: conn.id });
  return number;
}
