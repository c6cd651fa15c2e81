// CPU per call setup: SIPp places INVITE → 200 → ACK → BYE against the gateway (this process: real
// SIP stack, RTP endpoints, PostgreSQL writes; sessions are the test fake) at each offered rate, and
// the step reports the gateway's CPU time and its PostgreSQL backends' CPU time per completed setup,
// with completed setups per second. CPU per setup holds on a loaded machine where calls/s does not.
//   npx tsx bench/sip/setup-cost.ts [--rates 100,200] [--step-seconds 5]
// SIP_BENCH_CAPTURE=off: no SIP capture; =nowrite: capture records every message but its batches
// are discarded instead of written (splits capture's call-path cost from its database cost).
// Prints one JSON line per step. setup-compare.ts also copies this file into the tree before the
// safety layer, so it uses only what the test harness had then.
import os from 'node:os';
import { startTelephonyFixture, type TelephonyFixture } from '../../test/helpers/sip-harness.js';
import { placeCalls } from './sipp-calls.js';
import { pgBackendCpu, pgCpuDelta } from './pg-cpu.js';

export interface CostStep {
  rate: number;
  calls: number;
  successful: number;
  failed: number;
  seconds: number;
  completedPerSecond: number;
  /** Gateway process CPU (user + system) per completed setup. */
  cpuUsPerSetup: number;
  /** CPU of the PostgreSQL backends serving the gateway, per completed setup. */
  pgCpuUsPerSetup: number;
  /** SIP messages captured per completed setup (retransmissions included), 0 with capture off. */
  capturedPerSetup: number;
  /** Gateway CPU over the step, 100 = one core. */
  cpuPercent: number;
  loadAverage: number;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

export async function measureSetupCost(rates: number[], seconds: number): Promise<CostStep[]> {
  const capture = process.env.SIP_BENCH_CAPTURE === 'off' ? { capture: { enabled: false } } : {};
  const fx: TelephonyFixture = await startTelephonyFixture({ maxConcurrentCalls: 5000, rtpRange: { min: 20000, max: 29998 }, ...capture });
  const svc = fx.svc as unknown as {
    activeLegs: number;
    capture?: { flush(): Promise<void>; counts: { captured: number }; writeBatch?: () => Promise<void> } | null;
  };
  if (process.env.SIP_BENCH_CAPTURE === 'nowrite' && svc.capture) svc.capture.writeBatch = async () => {};
  const steps: CostStep[] = [];
  try {
    const sessions = Math.max(...rates) * 2;
    for (let i = 0; i < sessions; i++) await fx.createSession({ phoneNumber: fx.openNumber });
    // One short untimed call burst first: first-use compiles and the pool's connections are not a setup's cost.
    await placeCalls(fx, { calls: 20, rate: 20, timeoutSeconds: 30 });
    for (const rate of rates) {
      const calls = rate * seconds;
      const captured0 = svc.capture?.counts.captured ?? 0;
      const pg0 = pgBackendCpu();
      const cpu0 = process.cpuUsage();
      const load = os.loadavg()[0] ?? 0;
      const t0 = performance.now();
      const r = await placeCalls(fx, { calls, rate, timeoutSeconds: seconds * 6 });
      const elapsed = (performance.now() - t0) / 1000;
      // The last BYEs, their SQL and the capture rows they queued belong to this step's cost.
      for (let i = 0; i < 100 && svc.activeLegs > 0; i++) await new Promise((res) => setTimeout(res, 50));
      await svc.capture?.flush();
      const cpu = process.cpuUsage(cpu0);
      const pgMs = pgCpuDelta(pg0, pgBackendCpu());
      const ok = Math.max(r.successful, 1);
      const step: CostStep = {
        rate,
        calls,
        successful: r.successful,
        failed: r.failed + (r.code !== 0 && r.failed === 0 ? calls - r.successful : 0),
        seconds: Math.round(elapsed * 10) / 10,
        completedPerSecond: Math.round(r.successful / elapsed),
        cpuUsPerSetup: Math.round((cpu.user + cpu.system) / ok),
        pgCpuUsPerSetup: Math.round((pgMs * 1000) / ok),
        capturedPerSetup: Math.round((((svc.capture?.counts.captured ?? 0) - captured0) / ok) * 10) / 10,
        cpuPercent: Math.round(((cpu.user + cpu.system) / 1e6 / elapsed) * 100),
        loadAverage: Math.round(load * 10) / 10,
      };
      steps.push(step);
      console.log(JSON.stringify({ step }));
    }
  } finally {
    await fx.stop();
  }
  return steps;
}

if (process.argv[1]?.endsWith('setup-cost.ts')) {
  const rates = (arg('rates') ?? '100,200').split(',').map(Number);
  await measureSetupCost(rates, Number(arg('step-seconds') ?? 5));
  process.exit(0);
}
