import type { Command } from 'commander';
import { createOrg, getConnection, setOrgEngines, updateOrg, ORG_FEATURES, type UpdateOrgInput } from '../../store/index.js';
import { addEngineOptions, engineChanges } from './org-engines.js';
import { type CliContext, CliUsageError, parseIntOption, parseList, parsePositiveIntOption, printJson } from '../context.js';

const OVERRIDABLE_FIELDS = ['greeting', 'instructions', 'voice', 'language', 'brain', 'tools', 'escalation', 'knowledge_base', 'intents'];

function checkList(name: string, values: string[], allowed: readonly string[]): string[] {
  const bad = values.filter((v) => !allowed.includes(v));
  if (bad.length) throw new CliUsageError(`${name}: unknown value(s) ${bad.join(', ')}; allowed: ${allowed.join(', ')}`);
  return values;
}

export function register(admin: Command, ctx: CliContext): void {
  const org = admin.command('org').description('organizations: credits, limits, features, SIP routing');

  org
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'display name')
    .option('--credits <n>', 'API credits', parseIntOption('--credits'))
    .option('--max-concurrent-sessions <n>', 'sessions open (created or active) at once', parsePositiveIntOption('--max-concurrent-sessions'))
    .option('--rate-limit <n>', 'requests per window per API key', parsePositiveIntOption('--rate-limit'))
    .option('--rate-window-seconds <s>', 'rate-limit window length', parsePositiveIntOption('--rate-window-seconds'))
    .option('--features <list>', `comma list of: ${ORG_FEATURES.join(', ')}`, parseList)
    .action(async (o) => {
      const limits = ctx.config().limits;
      printJson(
        await createOrg(await ctx.db(), {
          name: o.name,
          credits: o.credits,
          maxConcurrentSessions: o.maxConcurrentSessions ?? limits.defaultMaxConcurrentSessions,
          rateLimit: o.rateLimit ?? limits.defaultRateLimit,
          rateWindowSeconds: o.rateWindowSeconds ?? limits.defaultRateWindowSeconds,
          features: o.features ? checkList('--features', o.features, ORG_FEATURES) : [],
        }),
      );
    });

  const update = org
    .command('update')
    .description('change an organization')
    .argument('<org_id>')
    .option('--status <status>', 'active | inactive')
    .option('--credits <n>', 'set the credit balance', parseIntOption('--credits'))
    .option('--features <list>', `comma list of: ${ORG_FEATURES.join(', ')} (replaces the set; "" clears)`)
    .option('--allowed-overrides <list>', `ai_agent.overrides fields sessions may set: ${OVERRIDABLE_FIELDS.join(', ')}`)
    .option('--max-concurrent-sessions <n>', 'sessions open at once', parsePositiveIntOption('--max-concurrent-sessions'))
    .option('--rate-limit <n>', 'requests per window per API key', parsePositiveIntOption('--rate-limit'))
    .option('--rate-window-seconds <s>', 'rate-limit window length', parsePositiveIntOption('--rate-window-seconds'))
    .option('--sip-enabled <bool>', 'true | false: SIP routing for this organization')
    .option('--default-connection <pcon_id>', 'the default route (provider connection); "none" clears')
    .action(async (id: string, o) => {
      if (o.status !== undefined && o.status !== 'active' && o.status !== 'inactive')
        throw new CliUsageError(`--status must be active or inactive, got '${o.status}'`);
      if (o.sipEnabled !== undefined && o.sipEnabled !== 'true' && o.sipEnabled !== 'false')
        throw new CliUsageError(`--sip-enabled must be true or false, got '${o.sipEnabled}'`);
      const changes: UpdateOrgInput = {
        status: o.status,
        credits: o.credits,
        features: o.features !== undefined ? checkList('--features', parseList(o.features), ORG_FEATURES) : undefined,
        allowedOverrides: o.allowedOverrides !== undefined ? checkList('--allowed-overrides', parseList(o.allowedOverrides), OVERRIDABLE_FIELDS) : undefined,
        maxConcurrentSessions: o.maxConcurrentSessions,
        rateLimit: o.rateLimit,
        rateWindowSeconds: o.rateWindowSeconds,
        sipEnabled: o.sipEnabled === undefined ? undefined : o.sipEnabled === 'true',
        defaultConnectionId: o.defaultConnection === undefined ? undefined : o.defaultConnection === 'none' ? null : o.defaultConnection,
      };
      const db = await ctx.db();
      if (changes.defaultConnectionId) {
        const c = await getConnection(db, changes.defaultConnectionId);
        if (!c || c.org_id !== id) throw new CliUsageError(`--default-connection: no connection ${changes.defaultConnectionId} in organization ${id}`);
      }
      const engines = await engineChanges(db, id, o);
      const updated = await updateOrg(db, id, changes);
      if (!updated) throw new CliUsageError(`no organization ${id}`);
      printJson(engines ? { ...updated, engines: await setOrgEngines(db, id, engines) } : updated);
    });
  addEngineOptions(update); // --stt / --translate / --tts (org-engines.ts)
}
