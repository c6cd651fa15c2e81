// `voxbridge admin calls …`: the SIP capture of calls (config.sipCapture). `trace CALL-ID` prints
// a ladder diagram of every SIP message of the call; `search` finds captured calls by Call-ID,
// number or session.
import type { Command } from 'commander';
import { getSipTrace, searchSipCalls } from '../../store/index.js';
import { renderLadder } from '../../telephony/index.js';
import { type CliContext, CliUsageError, parsePositiveIntOption, printJson } from '../context.js';

export function register(admin: Command, ctx: CliContext): void {
  const calls = admin.command('calls').description('SIP capture: ladder diagrams and search of captured calls');

  calls
    .command('trace')
    .description('print a ladder diagram of every captured SIP message of a call')
    .argument('<call_id>', 'the SIP Call-ID (the call_sid of a call)')
    .option('--json', 'print the captured messages as JSON instead of a diagram')
    .action(async (callId: string, o: { json?: boolean }) => {
      const rows = await getSipTrace(await ctx.db(), callId);
      if (rows.length === 0)
        throw new CliUsageError(`no SIP messages captured for Call-ID ${callId} (captured calls are kept ${ctx.config().sipCapture.retentionHours} h)`);
      if (o.json) printJson({ object: 'sip_trace', call_id: callId, messages: rows.map((r) => ({ ...r, captured_at: r.captured_at.toISOString() })) });
      else process.stdout.write(renderLadder(rows));
    });

  calls
    .command('search')
    .description('captured calls, newest first, by Call-ID, number (From or To) or session')
    .option('--call-id <call_id>', 'a SIP Call-ID')
    .option('--number <number>', 'a number in From or To (with or without +)')
    .option('--session <sess_id>', 'the session the call belonged to')
    .option('--limit <n>', 'at most this many calls (default 50)', parsePositiveIntOption('--limit'))
    .action(async (o: { callId?: string; number?: string; session?: string; limit?: number }) => {
      if (!o.callId && !o.number && !o.session) throw new CliUsageError('give --call-id, --number or --session');
      const found = await searchSipCalls(await ctx.db(), { callId: o.callId, number: o.number, sessionId: o.session, limit: o.limit });
      printJson({
        object: 'list',
        data: found.map((c) => ({ ...c, first_at: c.first_at.toISOString(), last_at: c.last_at.toISOString() })),
      });
    });
}
