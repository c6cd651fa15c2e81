// `voxbridge admin secret set|list|delete`: named secrets (engine API keys, an organization's LLM
// key), encrypted at rest. The value is read from stdin (never argv, which `ps` shows) unless
// --value is given; it is never printed back.
import type { Command } from 'commander';
import { deleteSecret, listSecrets, SECRET_NAME, setSecret } from '../../secrets/index.js';
import { type CliContext, CliUsageError, printJson } from '../context.js';

async function readStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of process.stdin) parts.push(c as Buffer);
  return Buffer.concat(parts)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function register(admin: Command, ctx: CliContext): void {
  const secret = admin.command('secret').description('named secrets (engine and LLM API keys), encrypted at rest');

  secret
    .command('set')
    .description('create or replace a secret; the value comes from stdin')
    .argument('<name>')
    .option('--org <org_id>', "the organization's own secret (default: node-wide)")
    .option('--value <value>', 'the value (prefer stdin: argv is visible to other users)')
    .action(async (name: string, o) => {
      if (!SECRET_NAME.test(name)) throw new CliUsageError(`secret name must match ${SECRET_NAME}`);
      const value = o.value ?? (await readStdin());
      if (!value) throw new CliUsageError('empty secret value (give it on stdin)');
      printJson(await setSecret(await ctx.db(), ctx.config().secretKey, o.org ?? null, name, value));
    });

  secret
    .command('list')
    .description('names and dates of the secrets (never values)')
    .option('--org <org_id>', "an organization's secrets (default: node-wide)")
    .action(async (o) => {
      printJson({ object: 'list', data: await listSecrets(await ctx.db(), o.org ?? null) });
    });

  secret
    .command('delete')
    .description('delete a secret')
    .argument('<name>')
    .option('--org <org_id>', "the organization's own secret (default: node-wide)")
    .action(async (name: string, o) => {
      if (!(await deleteSecret(await ctx.db(), o.org ?? null, name))) throw new CliUsageError(`no secret '${name}'${o.org ? ` in ${o.org}` : ''}`);
      printJson({ name, org_id: o.org ?? null, deleted: true });
    });
}
