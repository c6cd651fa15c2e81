// SIP benchmarks:
//   npx tsx bench/sip/run.ts [--only setup|concurrent|hostile] [--rates 50,100,200,300] [--calls 100,200,400] [--seconds 10]
//                            [--hostile-rates 0,1000,4000] [--hostile-calls 100]
// (1) call setup rate with SIPp: the highest rate with zero failed calls;
// (2) concurrent calls streaming RTP both ways at 20 ms, each bridged to a socket consumer:
//     loss, p99 added latency RTP-in → socket-out, CPU and memory per call;
// (3) hostile input at rising rates from another process while 100 bridged calls are live: the
//     largest rate at which the calls keep < 0.1 % loss (hostile-live.ts; not part of a default run).
// Prints figures; asserts nothing.
import { measureSetupRate } from './setup-rate.js';
import { measureConcurrent } from './concurrent.js';
import { measureHostileLive } from './hostile-live.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const list = (s: string | undefined) => (s ? s.split(',').map(Number) : undefined);

const only = arg('only');
if (!only || only === 'setup') {
  const r = await measureSetupRate({ rates: list(arg('rates')), secondsPerStep: Number(arg('step-seconds') ?? 5) });
  console.log(JSON.stringify({ bench: 'sip_setup_rate', best_rate_per_second_zero_failures: r.best, steps: r.steps }, null, 2));
}
if (!only || only === 'concurrent') {
  const r = await measureConcurrent({ callCounts: list(arg('calls')), seconds: Number(arg('seconds') ?? 10) });
  console.log(JSON.stringify({ bench: 'sip_concurrent_bridged', results: r }, null, 2));
}
if (only === 'hostile') {
  const r = await measureHostileLive({
    calls: Number(arg('hostile-calls') ?? 100),
    rates: list(arg('hostile-rates')),
    seconds: Number(arg('seconds') ?? 10),
  });
  console.log(JSON.stringify({ bench: 'sip_hostile_live_calls', largest_rate_under_0_1_percent_loss: r.best, steps: r.steps }, null, 2));
}
process.exit(0);
