import type { Command } from 'commander';
import { type CliContext } from '../context.js';
import { addConsoleUser } from './console-user-input.js';

export function register(admin: Command, ctx: CliContext): void {
  const operator = admin.command('operator').description("gateway operators (the console's operator view)");
  operator
    .command('add')
    .description('add an operator; prints a one-time set-password link unless --password-stdin')
    .requiredOption('--email <email>', 'sign-in email')
    .option('--password-stdin', 'read the password from standard input (automation)')
    .action(async (o) => {
      await addConsoleUser(ctx, { orgId: null, email: o.email, role: 'operator', passwordStdin: Boolean(o.passwordStdin) });
    });
}
