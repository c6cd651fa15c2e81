// The `voxbridge` command: serve, migrate, admin …
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config/index.js';
import { migrate } from '../store/index.js';
import { startGateway } from '../server.js';
import { CliContext, CliUsageError, printJson, parseList } from './context.js';
import { register as registerOrg } from './admin/org.js';
import { register as registerKey } from './admin/key.js';
import { register as registerConnection } from './admin/connection.js';
import { register as registerNumber } from './admin/number.js';
import { register as registerUser } from './admin/user.js';
import { register as registerOperator } from './admin/operator.js';
import { register as registerWebhook } from './admin/webhook.js';
import { register as registerPostCall } from './admin/post-call.js';
import { register as registerSecret } from './admin/secret.js';
import { register as registerCalls } from './admin/calls.js';

const ctx = new CliContext();
const program = new Command('voxbridge').description('voxbridge telephony media gateway').exitOverride();

program
  .command('migrate')
  .description('apply database migrations (idempotent)')
  .action(async () => {
    const cfg = ctx.config();
    const applied = await migrate(cfg.databaseUrl, cfg.databaseSchema);
    printJson({ schema: cfg.databaseSchema, applied });
  });

program
  .command('serve')
  .description('run the gateway (API, stream, SIP and workers by default)')
  .option('--roles <list>', 'api,media,worker', parseList)
  .action(async (o) => {
    const cfg = loadConfig(process.env, o.roles ? { roles: o.roles } : {});
    const gw = await startGateway(cfg);
    const stop = (signal: string) => {
      gw.logger.info({ signal }, 'shutting down');
      gw.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });

const admin = program.command('admin').description('provisioning: organizations, API keys, connections, numbers, webhook endpoints');
registerOrg(admin, ctx);
registerKey(admin, ctx);
registerConnection(admin, ctx);
registerNumber(admin, ctx);
registerUser(admin, ctx);
registerOperator(admin, ctx);
registerWebhook(admin, ctx);
registerPostCall(admin, ctx);
registerSecret(admin, ctx);
registerCalls(admin, ctx);

async function main(): Promise<void> {
  try {
    await program.parseAsync(process.argv);
    if (!process.argv.slice(2).includes('serve')) await ctx.close();
  } catch (err) {
    await ctx.close().catch(() => undefined);
    if (err instanceof CommanderError) process.exit(err.exitCode);
    if (err instanceof CliUsageError || err instanceof ConfigError) {
      process.stderr.write(`voxbridge: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`voxbridge: ${(err as Error).message ?? err}\n`);
    process.exit(1);
  }
}

void main();
