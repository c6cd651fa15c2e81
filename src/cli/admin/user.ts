import type { Command } from 'commander';
import { ORG_ROLES, type ConsoleRole } from '../../console/index.js';
import { type CliContext, CliUsageError } from '../context.js';
import { addConsoleUser } from './console-user-input.js';

export function register(admin: Command, ctx: CliContext): void {
  const user = admin.command('user').description('web console users of an organization');
  user
    .command('add')
    .description('add a console user; prints a one-time set-password link unless --password-stdin')
    .requiredOption('--org <org_id>', 'organization')
    .requiredOption('--email <email>', 'sign-in email')
    .option('--role <role>', `${ORG_ROLES.join(' | ')}`, 'developer')
    .option('--password-stdin', 'read the password from standard input (automation)')
    .action(async (o) => {
      if (!(ORG_ROLES as readonly string[]).includes(o.role)) throw new CliUsageError(`--role must be one of ${ORG_ROLES.join(', ')}, got '${o.role}'`);
      await addConsoleUser(ctx, { orgId: o.org, email: o.email, role: o.role as ConsoleRole, passwordStdin: Boolean(o.passwordStdin) });
    });
}
