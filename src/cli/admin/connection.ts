// `voxbridge admin connection add|update|disable`: provider connections (pcon_), the SIP trunks an
// organization dials out through and accepts calls from. Passwords are encrypted at rest with
// config.secretKey (AES-256-GCM) and never printed back.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { Command } from 'commander';
import {
  RTP_LATCHING_MODES,
  createConnection,
  disableConnection,
  getConnection,
  orgExists,
  updateConnection,
  type ConnectionRecord,
  type ConnectionSecurity,
  type RtpLatching,
} from '../../store/index.js';
import { encryptSecret, isValidCidr, normalizeCidr } from '../../telephony/index.js';
import { type CliContext, CliUsageError, parseList, printJson } from '../context.js';

const PROVIDERS = ['carrier_a', 'carrier_b'] as const;

/** The operator's view of a connection: secrets reduced to whether one is set. */
export function presentConnection(c: ConnectionRecord): Record<string, unknown> {
  return {
    id: c.id,
    object: 'provider_connection',
    org_id: c.org_id,
    provider: c.provider,
    host: c.host,
    port: c.port,
    transport: c.transport,
    username: c.username,
    password_set: c.password_enc !== null,
    inbound_cidrs: c.inbound_cidrs,
    rtp_latching: c.rtp_latching,
    require_secure: c.require_secure,
    require_client_cert: c.require_client_cert,
    tls_client_ca_set: c.tls_client_ca !== null,
    tls_client_subject: c.tls_client_subject,
    status: c.status,
    created_at: c.created_at instanceof Date ? c.created_at.toISOString() : c.created_at,
  };
}

export function parseHostPort(raw: string, defaultPort = 5060): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
  const host = m?.[1];
  if (!m || !host) throw new CliUsageError(`--host must be HOST or HOST:PORT, got '${raw}'`);
  const port = m[2] ? Number(m[2]) : defaultPort;
  if (port < 1 || port > 65535) throw new CliUsageError(`--host port must be 1-65535, got ${port}`);
  return { host, port };
}

const TRANSPORTS = ['udp', 'tcp', 'tls'] as const;

/** Secure-trunk options shared by add and update. */
function secureOptions(cmd: Command): Command {
  return cmd
    .option('--require-secure', 'calls from this connection must use TLS signalling and SRTP media (refused otherwise)')
    .option('--no-require-secure', 'accept calls over UDP/TCP and plain RTP again')
    .option('--require-client-cert', 'mutual TLS: calls must present a client certificate (see --client-ca, --client-subject)')
    .option('--no-require-client-cert', 'no client certificate needed')
    .option('--client-ca <pem_file>', "CA that must have issued the client certificate (default: the listener's SIP_TLS_CA); 'none' clears")
    .option('--client-subject <name>', "subject CN or DNS/URI SAN the client certificate must carry; 'none' clears");
}

function securityOf(o: { requireSecure?: boolean; requireClientCert?: boolean; clientCa?: string; clientSubject?: string }): ConnectionSecurity {
  const out: ConnectionSecurity = {};
  if (o.requireSecure !== undefined) out.requireSecure = o.requireSecure;
  if (o.requireClientCert !== undefined) out.requireClientCert = o.requireClientCert;
  if (o.clientCa !== undefined) {
    if (o.clientCa === 'none') out.tlsClientCa = null;
    else {
      let pem: string;
      try {
        pem = readFileSync(o.clientCa, 'utf8');
        new X509Certificate(pem); // refuse what the call path could not read
      } catch (err) {
        throw new CliUsageError(`--client-ca ${o.clientCa}: not a readable PEM certificate (${(err as Error).message})`);
      }
      out.tlsClientCa = pem;
    }
  }
  if (o.clientSubject !== undefined) out.tlsClientSubject = o.clientSubject === 'none' ? null : o.clientSubject;
  return out;
}

function checkTransport(t: string | undefined): void {
  if (t !== undefined && !(TRANSPORTS as readonly string[]).includes(t))
    throw new CliUsageError(`--transport must be one of ${TRANSPORTS.join(', ')}, got '${t}'`);
}

const RTP_LATCHING_HELP =
  "which RTP sources a call's media is taken from: nat (the SDP's, or a NAT-rewritten one in the first packets; default) | signalled (the SDP's only)";

function parseRtpLatching(raw: string): RtpLatching {
  if (!(RTP_LATCHING_MODES as readonly string[]).includes(raw))
    throw new CliUsageError(`--rtp-latching must be one of ${RTP_LATCHING_MODES.join(', ')}, got '${raw}'`);
  return raw as RtpLatching;
}

export function register(admin: Command, ctx: CliContext): void {
  const conn = admin.command('connection').description('provider connections (SIP trunks): pcon_ ids');

  secureOptions(conn.command('add'))
    .description('add a provider connection')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption('--provider <name>', PROVIDERS.join(' | '))
    .requiredOption('--host <host[:port]>', 'SIP host of the trunk (port default 5060)')
    .option('--transport <t>', 'udp | tcp | tls (tls: dial sips/TLS, default port 5061)', 'udp')
    .option('--username <user>', 'digest user (outbound auth; also lets a PBX authenticate inbound)')
    .option('--password <password>', 'digest password (stored encrypted)')
    .option('--inbound-cidrs <list>', 'comma list of IPv4/IPv6 CIDRs (or single addresses) allowed to send calls', parseList)
    .option('--rtp-latching <mode>', RTP_LATCHING_HELP, 'nat')
    .action(async (o) => {
      const rtpLatching = parseRtpLatching(o.rtpLatching);
      if (!PROVIDERS.includes(o.provider)) throw new CliUsageError(`--provider must be one of ${PROVIDERS.join(', ')}, got '${o.provider}'`);
      checkTransport(o.transport);
      if (o.requireSecure && o.transport !== 'tls') throw new CliUsageError('--require-secure needs --transport tls (dials must be secure too)');
      if (!!o.username !== !!o.password) throw new CliUsageError('--username and --password go together');
      const cidrs: string[] = o.inboundCidrs ?? [];
      const bad = cidrs.filter((c) => !isValidCidr(c));
      if (bad.length) throw new CliUsageError(`--inbound-cidrs: not IPv4 or IPv6 CIDRs: ${bad.join(', ')}`);
      const { host, port } = parseHostPort(o.host, o.transport === 'tls' ? 5061 : 5060);
      const db = await ctx.db();
      if (!(await orgExists(db, o.org))) throw new CliUsageError(`no organization ${o.org}`);
      const created = await createConnection(db, {
        orgId: o.org,
        provider: o.provider,
        host,
        port,
        transport: o.transport,
        username: o.username ?? null,
        passwordEnc: o.password ? encryptSecret(ctx.config().secretKey, o.password) : null,
        inboundCidrs: cidrs.map((c) => normalizeCidr(c) ?? c),
        rtpLatching,
        security: securityOf(o),
      });
      printJson(presentConnection(created));
    });

  secureOptions(conn.command('update'))
    .description('change a provider connection (applies to calls set up afterwards)')
    .argument('<pcon_id>')
    .option('--transport <t>', 'udp | tcp | tls')
    .option('--rtp-latching <mode>', RTP_LATCHING_HELP)
    .action(async (id: string, o) => {
      checkTransport(o.transport);
      const rtpLatching = o.rtpLatching === undefined ? undefined : parseRtpLatching(o.rtpLatching);
      const db = await ctx.db();
      const current = await getConnection(db, id);
      if (!current) throw new CliUsageError(`no connection ${id}`);
      const security = securityOf(o);
      const transport = o.transport ?? current.transport;
      if ((security.requireSecure ?? current.require_secure) && transport !== 'tls') {
        throw new CliUsageError("--require-secure needs the connection's transport to be tls (add --transport tls)");
      }
      const updated = await updateConnection(db, id, {
        ...security,
        ...(o.transport ? { transport: o.transport } : {}),
        ...(rtpLatching ? { rtpLatching } : {}),
      });
      if (!updated) throw new CliUsageError(`no connection ${id}`);
      printJson(presentConnection(updated));
    });

  conn
    .command('disable')
    .description('disable a provider connection (its numbers stop taking calls, dials through it fail)')
    .argument('<pcon_id>')
    .action(async (id: string) => {
      const updated = await disableConnection(await ctx.db(), id);
      if (!updated) throw new CliUsageError(`no connection ${id}`);
      printJson(presentConnection(updated));
    });
}
