// `voxbridge admin webhook add|list|disable|rotate-secret|deliveries`: the operator's view of
// webhook endpoints, with the same rules as the REST routes (URL guard, subscriptions, secrets shown once).
import type { Command } from 'commander';
import { getWebhookEndpoint, listAllWebhookEndpoints, listAttempts, orgExists } from '../../store/index.js';
import { presentAttempt, presentEndpoint, SubscriptionError, UrlRefused, WebhookEndpoints } from '../../webhooks/index.js';
import { type CliContext, CliUsageError, parseList, parsePositiveIntOption, printJson } from '../context.js';

async function usage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof UrlRefused) throw new CliUsageError(`--url: ${err.message}`);
    if (err instanceof SubscriptionError) throw new CliUsageError(`--events: ${err.message}`);
    throw err;
  }
}

export function register(admin: Command, ctx: CliContext): void {
  const wh = admin.command('webhook').description('webhook endpoints (wh_ ids): subscriptions, secrets, delivery log');
  const service = async () => new WebhookEndpoints(await ctx.db(), ctx.config());

  wh.command('add')
    .description('add an endpoint; prints it with its signing secret (shown once)')
    .requiredOption('--org <org_id>', 'owning organization')
    .requiredOption('--url <url>', 'https URL (http to loopback only with WEBHOOKS_ALLOW_LOOPBACK_HTTP=true)')
    .requiredOption('--events <list>', "comma list of event types or categories, or '*'", parseList)
    .option('--realtime', 'also deliver transcript.segment', false)
    .option('--description <text>', 'free text')
    .action(async (o) => {
      const db = await ctx.db();
      if (!(await orgExists(db, o.org))) throw new CliUsageError(`no organization ${o.org}`);
      if (!o.events.length) throw new CliUsageError('--events: give at least one event type, category or *');
      const { row, secret } = await usage(async () =>
        (await service()).create(o.org, { url: o.url, events: o.events, realtime: o.realtime, description: o.description ?? null }),
      );
      printJson({ ...presentEndpoint(row, secret), org_id: row.org_id });
    });

  wh.command('list')
    .description("list an organization's endpoints")
    .requiredOption('--org <org_id>', 'organization')
    .action(async (o) => {
      const rows = await listAllWebhookEndpoints(await ctx.db(), o.org);
      printJson({ object: 'list', data: rows.map((r) => presentEndpoint(r)) });
    });

  wh.command('disable')
    .description('disable an endpoint (no deliveries until re-enabled through the API)')
    .argument('<wh_id>')
    .action(async (id: string) => {
      const row = await (await service()).update(null, id, { enabled: false }, 'disabled by an operator');
      if (!row) throw new CliUsageError(`no webhook endpoint ${id}`);
      printJson(presentEndpoint(row));
    });

  wh.command('rotate-secret')
    .description('new signing secret (printed once); the previous one keeps signing for 24 h')
    .argument('<wh_id>')
    .action(async (id: string) => {
      const rotated = await (await service()).rotateSecret(null, id);
      if (!rotated) throw new CliUsageError(`no webhook endpoint ${id}`);
      printJson(presentEndpoint(rotated.row, rotated.secret));
    });

  wh.command('deliveries')
    .description("an endpoint's delivery attempts, newest first")
    .argument('<wh_id>')
    .option('--limit <n>', 'how many (default 20, at most 100)', parsePositiveIntOption('--limit'))
    .action(async (id: string, o) => {
      const db = await ctx.db();
      if (!(await getWebhookEndpoint(db, null, id))) throw new CliUsageError(`no webhook endpoint ${id}`);
      const page = await listAttempts(db, id, Math.min(o.limit ?? 20, 100));
      printJson({ object: 'list', data: page.items.map(presentAttempt), has_more: page.hasMore });
    });
}
