// `voxbridge admin number add`: managed phone numbers (E.164). A call to the number joins the
// session created for it (routing.phone_number) or, when none waits, the number's default
// session (--default-session); otherwise the caller hears 480 Temporarily Unavailable.
import type { Command } from 'commander';
import { createPhoneNumber, findPhoneNumber, getConnection, orgExists, sessionExistsInOrg, type PhoneNumberRecord } from '../../store/index.js';
import { type CliContext, CliUsageError, printJson } from '../context.js';

const E164 = /^\+[1-9]\d{6,14}$/;

export function presentNumber(n: PhoneNumberRecord): Record<string, unknown> {
  return {
    id: n.id,
    object: 'phone_number',
    org_id: n.org_id,
    number: n.number,
    connection_id: n.connection_id,
    default_session_id: n.default_session_id,
    created_at: n.created_at instanceof Date ? n.created_at.toISOString() : n.created_at,
  };
}

export function register(admin: Command, ctx: CliContext): void {
  const num = admin.command('number').description('managed phone numbers');

  num
    .command('add')
    .description('add a managed number')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption('--number <e164>', 'the number, E.164 (e.g. +14155550100)')
    .option('--connection <pcon_id>', 'the provider connection that carries it')
    .option('--default-session <sess_id>', 'session that takes calls when none is waiting for the number')
    .action(async (o) => {
      if (!E164.test(o.number)) throw new CliUsageError(`--number must be E.164 (+ and 7 to 15 digits), got '${o.number}'`);
      const db = await ctx.db();
      if (!(await orgExists(db, o.org))) throw new CliUsageError(`no organization ${o.org}`);
      if (o.connection) {
        const c = await getConnection(db, o.connection);
        if (!c || c.org_id !== o.org) throw new CliUsageError(`--connection: no connection ${o.connection} in organization ${o.org}`);
      }
      if (o.defaultSession) {
        if (!(await sessionExistsInOrg(db, o.defaultSession, o.org)))
          throw new CliUsageError(`--default-session: no session ${o.defaultSession} in organization ${o.org}`);
      }
      if (await findPhoneNumber(db, o.number)) throw new CliUsageError(`${o.number} is already a managed number`);
      printJson(
        presentNumber(
          await createPhoneNumber(db, { orgId: o.org, number: o.number, connectionId: o.connection ?? null, defaultSessionId: o.defaultSession ?? null }),
        ),
      );
    });
}
