// `voxbridge admin connection add|disable`: provider connections (pcon_), the SIP trunks an
// organization dials out through and accepts calls from. Passwords are encrypted at rest with
// config.secretKey (AES-256-GCM) and never printed back.
import type { Command } from 'commander';
import { createConnection, disableConnection, type ConnectionRecord } from '../../store/index.js';
import { encryptSecret, isValidCidr } from '../../telephony/index.js';
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
    status: c.status,
    created_at: c.created_at instanceof Date ? c.created_at.toISOString() : c.created_at,
  };
}

export function parseHostPort(raw: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
  const host = m?.[1];
  if (!m || host === undefined) throw new CliUsageError(`--host must be HOST or HOST:PORT, got '${raw}'`);
  const port = m[2] ? Number(m[2]) : 5060;
  if (port < 1 || port > 65535) throw new CliUsageError(`--host port must be 1-65535, got ${port}`);
  return { host, port };
}

export function register(admin: Command, ctx: CliContext): void {
  const conn = admin.command('connection').description('provider connections (SIP trunks): pcon_ ids');

  conn.command('add')
    .description('add a provider connection')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption('--provider <name>', PROVIDERS.join(' | '))
    .requiredOption('--host <host[:port]>', 'SIP host of the trunk (port default 5060)')
    .option('--transport <t>', 'udp | tcp', 'udp')
    .option('--username <user>', 'digest user (outbound auth; also lets a PBX authenticate inbound)')
    .option('--password <password>', 'digest password (stored encrypted)')
    .option('--inbound-cidrs <list>', 'comma list of IPv4 CIDRs allowed to send calls', parseList)
    .action(async (o) => {
      if (!PROVIDERS.includes(o.provider)) throw new CliUsageError(`--provider must be one of ${PROVIDERS.join(', ')}, got '${o.provider}'`);
      if (o.transport !== 'udp' && o.transport !== 'tcp') throw new CliUsageError(`--transport must be udp or tcp, got '${o.transport}'`);
      if (!!o.username !== !!o.password) throw new CliUsageError('--username and --password go together');
      const cidrs: string[] = o.inboundCidrs ?? [];
      const bad = cidrs.filter((c) => !isValidCidr(c));
      if (bad.length) throw new CliUsageError(`--inbound-cidrs: not IPv4 CIDRs: ${bad.join(', ')}`);
      const { host, port } = parseHostPort(o.host);
      const db = await ctx.db();
      const { rowCount } = await db.query('SELECT 1 FROM organizations WHERE id = $1', [o.org]);
      if (!rowCount) throw new CliUsageError(`no organization ${o.org}`);
      const created = await createConnection(db, {
        orgId: o.org, provider: o.provider, host, port, transport: o.transport,
        username: o.username ?? null,
        passwordEnc: o.password ? encryptSecret(ctx.config().secretKey, o.password) : null,
        inboundCidrs: cidrs.map((c) => (c.includes('/') ? c : `${c}/32`)),
      });
      printJson(presentConnection(created));
    });

  conn.command('disable')
    .description('disable a provider connection (its numbers stop taking calls, dials through it fail)')
    .argument('<pcon_id>')
    .action(async (id: string) => {
      const updated = await disableConnection(await ctx.db(), id);
      if (!updated) throw new CliUsageError(`no connection ${id}`);
      printJson(presentConnection(updated));
    });
}
