// Shared by `admin user add` and `admin operator add`: reading a password from stdin and creating
// the user, printing either the user or a one-time set-password link.
import { createConsoleUser, EmailTakenError, setPasswordLink, type ConsoleRole } from '../../console/index.js';
import { orgExists } from '../../store/index.js';
import { type CliContext, CliUsageError, printJson } from '../context.js';

const MIN_PASSWORD = 10;

export async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: the trailing newline of `echo` or a here-string is not part of the password.
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (password.length < MIN_PASSWORD) throw new CliUsageError(`--password-stdin: the password must be at least ${MIN_PASSWORD} characters`);
  return password;
}

export async function addConsoleUser(
  ctx: CliContext,
  input: { orgId: string | null; email: string; role: ConsoleRole; passwordStdin: boolean },
): Promise<void> {
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new CliUsageError(`--email must be an email address, got '${input.email}'`);
  const password = input.passwordStdin ? await readPasswordFromStdin() : undefined;
  const db = await ctx.db();
  if (input.orgId) {
    if (!(await orgExists(db, input.orgId))) throw new CliUsageError(`no organization ${input.orgId}`);
  }
  try {
    const { user, setPasswordToken } = await createConsoleUser(db, { orgId: input.orgId, email: input.email, role: input.role, password });
    printJson(setPasswordToken ? { ...user, set_password_url: setPasswordLink(ctx.config().publicUrl, setPasswordToken) } : user);
  } catch (err) {
    if (err instanceof EmailTakenError) throw new CliUsageError(`a console user with email ${input.email} already exists`);
    throw err;
  }
}
