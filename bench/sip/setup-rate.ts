// Call setup rate: SIPp places INVITE → 200 → ACK → BYE against the gateway at rising rates; the
// figure is the highest rate whose run had zero failed calls and completed calls at (≥85% of) that rate. The gateway runs in this process
// with the real SIP stack, RTP endpoints and PostgreSQL writes; sessions are the test fake.
import { startTelephonyFixture, type TelephonyFixture } from '../../test/helpers/sip-harness.js';
import { placeCalls } from './sipp-calls.js';

export interface RateStep {
  rate: number;
  calls: number;
  successful: number;
  failed: number;
  cpuPercent: number;
  seconds: number;
  /** Calls completed per second of the run (SIPp keeps offering at `rate` even when calls queue). */
  completedPerSecond: number;
}

export async function measureSetupRate(opts: { rates?: number[]; secondsPerStep?: number } = {}): Promise<{ best: number; steps: RateStep[] }> {
  const rates = opts.rates ?? [50, 100, 150, 200, 250, 300, 400, 500];
  const seconds = opts.secondsPerStep ?? 5;
  // SIP_BENCH_CAPTURE=off: without SIP capture (on by default: every message queued to PostgreSQL),
  // to tell its cost from the front's own.
  const capture = process.env.SIP_BENCH_CAPTURE === 'off' ? { capture: { enabled: false } } : {};
  const fx: TelephonyFixture = await startTelephonyFixture({ maxConcurrentCalls: 5000, rtpRange: { min: 20000, max: 29998 }, ...capture });
  const steps: RateStep[] = [];
  let best = 0;
  try {
    // An inbound call takes a waiting session with no live customer leg (sip/README.md "session choice"),
    // so overlapping calls need one session each: enough for the calls in flight at the highest rate.
    const sessions = Math.max(...rates) * 2;
    for (let i = 0; i < sessions; i++) await fx.createSession({ phoneNumber: fx.openNumber });
    for (const rate of rates) {
      const calls = rate * seconds;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await placeCalls(fx, { calls, rate, timeoutSeconds: seconds * 6 });
      const elapsed = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const step: RateStep = {
        rate,
        calls,
        successful: r.successful,
        failed: r.failed + (r.code !== 0 && r.failed === 0 ? calls - r.successful : 0),
        cpuPercent: Math.round(((cpu.user + cpu.system) / 1e6 / elapsed) * 100),
        seconds: Math.round(elapsed * 10) / 10,
        completedPerSecond: Math.round(r.successful / elapsed),
      };
      steps.push(step);
      if (r.code !== 0 && r.errors) console.log(`  first SIPp error: ${r.errors.split('\n').find((l) => l.trim()) ?? ''}`);
      console.log(
        `setup rate ${rate}/s offered: ${step.successful}/${calls} ok, ${step.failed} failed, ${step.completedPerSecond}/s completed, gateway CPU ${step.cpuPercent}% over ${step.seconds}s`,
      );
      if (step.failed > 0 || step.successful < calls) break;
      // Zero failures is not enough: the gateway must also keep up (calls not piling up).
      if (step.completedPerSecond < rate * 0.85) break;
      best = rate;
      // Let the last BYEs and their DB writes settle before the next step.
      for (let i = 0; i < 100 && fx.svc.activeLegs > 0; i++) await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    await fx.stop();
  }
  return { best, steps };
}
