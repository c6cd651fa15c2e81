// `voxbridge admin post-call …`: an organization's recording retention and analysis compliance
// rules, and recording consent given after a session was created (README "Recordings", "Analysis").
import type { Command } from 'commander';
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
      if (days !== null && (!Number.isInteger(days) || days < 1)) throw new CliUsageError(`--retention-days must be a positive integer, got '${o.retentionDays}'`);
      const rules = o.complianceRules === undefined ? null : parseRules(o.complianceRules);
      const { rows } = await (await ctx.db()).query(
        `UPDATE organizations SET recording_retention_days = COALESCE($2, recording_retention_days), compliance_rules = COALESCE($3, compliance_rules), updated_at = now()
          WHERE id = $1 RETURNING id, recording_retention_days, compliance_rules`,
        [id, days, rules],
      );
      if (!rows[0]) throw new CliUsageError(`no organization ${id}`);
      printJson(rows[0]);
    });

  pc.command('consent')
    .description("record a session's recording consent (granted | denied | pending)")
    .argument('<session_id>')
    .argument('<status>')
    .action(async (id: string, status: string) => {
      if (!['granted', 'denied', 'pending'].includes(status)) throw new CliUsageError(`status must be granted, denied or pending, got '${status}'`);
      const { rows } = await (await ctx.db()).query(
        `UPDATE sessions SET recording = recording || jsonb_build_object('consent_required', true, 'consent_status', $2::text) WHERE id = $1 RETURNING id, recording`,
        [id, status],
      );
      if (!rows[0]) throw new CliUsageError(`no session ${id}`);
      printJson(rows[0]);
    });
}
