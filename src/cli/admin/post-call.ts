// `voxbridge admin post-call …`: an organization's recording retention and analysis compliance
// rules, and recording consent given after a session was created (README "Recordings", "Analysis").
import type { Command } from 'commander';
import { recordRecordingConsent, setPostCallPolicy } from '../../store/index.js';
import { type CliContext, CliUsageError, printJson } from '../context.js';

function parseRules(json: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new CliUsageError('--compliance-rules must be JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new CliUsageError('--compliance-rules must be a JSON object');
  const allowed = ['required_disclosures', 'forbidden_phrases', 'detect_card_numbers'];
  for (const [k, val] of Object.entries(v)) {
    if (!allowed.includes(k)) throw new CliUsageError(`--compliance-rules: unknown key '${k}'; allowed: ${allowed.join(', ')}`);
    if (k === 'detect_card_numbers' ? typeof val !== 'boolean' : !Array.isArray(val) || val.some((p) => typeof p !== 'string')) {
      throw new CliUsageError(`--compliance-rules: '${k}' must be ${k === 'detect_card_numbers' ? 'a boolean' : 'an array of strings'}`);
    }
  }
  return v as Record<string, unknown>;
}

export function register(admin: Command, ctx: CliContext): void {
  const pc = admin.command('post-call').description('recording retention, consent and analysis compliance rules');

  pc.command('policy')
    .description("set an organization's recording retention and compliance rules")
    .argument('<org_id>')
    .option('--retention-days <n>', 'days a ready recording is kept (default 30)')
    .option('--compliance-rules <json>', '{"required_disclosures":[…],"forbidden_phrases":[…],"detect_card_numbers":true}')
    .action(async (id: string, o) => {
      const days = o.retentionDays === undefined ? null : Number(o.retentionDays);
      if (days !== null && (!Number.isInteger(days) || days < 1))
        throw new CliUsageError(`--retention-days must be a positive integer, got '${o.retentionDays}'`);
      const rules = o.complianceRules === undefined ? null : parseRules(o.complianceRules);
      const policy = await setPostCallPolicy(await ctx.db(), id, { retentionDays: days, complianceRules: rules });
      if (!policy) throw new CliUsageError(`no organization ${id}`);
      printJson(policy);
    });

  pc.command('consent')
    .description("record a session's recording consent (granted | denied | pending)")
    .argument('<session_id>')
    .argument('<status>')
    .action(async (id: string, status: string) => {
      if (status !== 'granted' && status !== 'denied' && status !== 'pending')
        throw new CliUsageError(`status must be granted, denied or pending, got '${status}'`);
      const updated = await recordRecordingConsent(await ctx.db(), id, status);
      if (!updated) throw new CliUsageError(`no session ${id}`);
      printJson(updated);
    });
}
