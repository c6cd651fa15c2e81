import type { Command } from 'commander';
import { DEFAULT_SCOPES } from '../../api/index.js';
import { createApiKey, orgExists, revokeApiKey } from '../../store/index.js';
import { type CliContext, CliUsageError, parseList, printJson } from '../context.js';

export function register(admin: Command, ctx: CliContext): void {
  const key = admin.command('key').description('API keys (shown once, stored as SHA-256 hashes)');

  key
    .command('create')
    .description('create an API key; the secret is printed once')
    .requiredOption('--org <org_id>', 'owning organization')
    .option('--env <env>', "live | test (defaults to this deployment's API_ENVIRONMENT)")
    .option('--scopes <list>', `comma list; default all: ${DEFAULT_SCOPES.join(', ')}`, parseList)
    .option('--expires-at <iso8601>', 'expiry time')
    .action(async (o) => {
      const env = o.env ?? ctx.config().apiEnvironment;
      if (env !== 'live' && env !== 'test') throw new CliUsageError(`--env must be live or test, got '${env}'`);
      const scopes: string[] = o.scopes ?? DEFAULT_SCOPES;
      const bad = scopes.filter((s) => !(DEFAULT_SCOPES as string[]).includes(s));
      if (bad.length || scopes.length === 0)
        throw new CliUsageError(`--scopes: unknown scope(s) ${bad.join(', ') || '(none given)'}; allowed: ${DEFAULT_SCOPES.join(', ')}`);
      let expiresAt: Date | null = null;
      if (o.expiresAt !== undefined) {
        expiresAt = new Date(o.expiresAt);
        if (Number.isNaN(expiresAt.getTime())) throw new CliUsageError(`--expires-at must be an ISO 8601 time, got '${o.expiresAt}'`);
      }
      const db = await ctx.db();
      if (!(await orgExists(db, o.org))) throw new CliUsageError(`no organization ${o.org}`);
      printJson(await createApiKey(db, { orgId: o.org, environment: env, scopes, expiresAt }));
    });

  key
    .command('revoke')
    .description('revoke an API key (idempotent)')
    .argument('<key_id>')
    .action(async (id: string) => {
      const revoked = await revokeApiKey(await ctx.db(), id);
      if (!revoked) throw new CliUsageError(`no API key ${id}`);
      printJson(revoked);
    });
}
