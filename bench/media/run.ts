// Media-path benchmark, one command:
//   npx tsx bench/media/run.ts [--calls 1,20,50,200,400] [--seconds 10] [--scenarios rtp_to_socket,...]
//                              [--capacity-step 200] [--capacity-max 1000] [--nodes 1]
// Prints, in one run: the added latency p50/p99 per call count for RTP-in → socket-out,
// socket-in → RTP-out, RTP-in → RTP-out (two phone legs bridged through one session) and socket
// 100–200 ms chunks → RTP-out; then steps bridged RTP→RTP calls up from the last count until the
// loss reaches 0.1 % (the calls carried), with CPU per call-second and memory per call. Every call
// of a step starts in the same tick; the figures are taken after a warm-up (BENCH_WARMUP_SECONDS,
// default 3), whose own p99 is printed as startup_p99. Each step also prints the host's busy share of all cores
// and the share the hypervisor stole (steal_%): a step during which a shared VM lost a third of its CPU measured a
// smaller machine. Each step prints the gateway's GC too: the KB its scavenges promoted to old space per
// call-second and its mark-compacts (bench/sip/gc-totals.ts), figures a slow or busy hour does not move.
// BENCH_STAGES=1 also prints the gateway's per-stage histograms (warm-up and window apart), the latency by
// send time in 500 ms bins (warm-up included: how long an event held added latency), both processes' loop
// stalls over BENCH_STALL_MS (default 50) and GC pauses in the warm-up, and when the window's tail happened
// next to those of the window; BENCH_TIMELINE_MS=250 has each gateway node print a `timeline` line that
// often (underruns, concealed and dropped frames, the legs' mean jitter-buffer target, each stage's mean
// time since the last line: which rule added latency when, and to how many legs); SIP_BENCH_PROFILE=<dir> writes a
// V8 CPU profile of the gateway. BENCH_HANGUP_HALF=1 hangs up every odd call halfway through the window
// (a mass hang-up; the figures are the survivors'), BENCH_GATEWAY_GRACE_SECONDS=1 ends their sessions a
// second later. MEDIA_SUBTICKS=1|2|4 sets the gateway clock's sub-ticks (default 4; 1: every leg at one instant
// per frame, as before the thirty-fourth pass). MEDIA_IO=dgram|native picks the gateway's RTP socket I/O (default auto: native when the
// addon is built, as in production); BENCH_PHONES_IO=native reads the load generator's phones the same batched way
// (latency then ends at the kernel's arrival time) and has their packets leave from the addon's send thread on
// their 20 ms grid, queued BENCH_PHONES_LEAD_TICKS ticks ahead (default 2, 0 to 2), so the generator's own loop
// stalls under 40 ms do not make every call's frame late at once, and spreads the calls' phones over four
// phases of the frame, 5 ms apart, as independent phones' are (BENCH_PHONES_PHASES=1: all at one point, as
// before the thirty-third pass; see scenarios.ts). Each call's loud marker frame goes out in its own tick of
// every 25 (call i in tick i mod 25); BENCH_MARKERS=lockstep sends every call's in the same tick, as the
// fifteenth and earlier passes did. --nodes N runs N gateway processes on this host, as N voxbridge nodes
// behind the edge's dispatcher (sip/kamailio), and deals the calls to them round robin: one event loop
// per core instead of one for the machine. Prints figures; asserts nothing.
import { SCENARIOS, describe, runStep, startBenchNodes, type Scenario, type StepResult } from './scenarios.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const counts = (arg('calls') ?? '1,20,50,200,400').split(',').map(Number);
const seconds = Number(arg('seconds') ?? 10);
const scenarios = (arg('scenarios')?.split(',') as Scenario[] | undefined) ?? SCENARIOS;
const unknown = scenarios.filter((s) => !SCENARIOS.includes(s));
if (unknown.length > 0) {
  // A misspelt scenario would otherwise run as socket→RTP without its marker and print NaN.
  console.error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  process.exit(2);
}
const capacityStep = Number(arg('capacity-step') ?? 200);
const capacityMax = Number(arg('capacity-max') ?? 1000);
const nodeCount = Math.max(1, Math.floor(Number(arg('nodes') ?? 1)));
const LOSS_LIMIT = 0.1;

const nodes = await startBenchNodes(nodeCount);
const results: StepResult[] = [];
try {
  for (const scenario of scenarios) {
    for (const calls of counts) {
      const r = await runStep(nodes, scenario, calls, seconds);
      results.push(r);
      console.log(describe(r));
      if (r.connected < calls) break;
    }
  }
  // Capacity: bridged phone-to-phone calls (the heaviest per call: two legs), stepped up until loss.
  if (capacityStep > 0) {
    let calls = Math.max(...counts) + capacityStep;
    while (calls <= capacityMax) {
      const r = await runStep(nodes, 'rtp_to_rtp', calls, seconds);
      results.push({ ...r });
      console.log(`capacity: ${describe(r)}`);
      if (r.lossPercent >= LOSS_LIMIT || r.connected < calls) break;
      calls += capacityStep;
    }
  }
} finally {
  await Promise.all(nodes.map((node) => node.stop()));
}

console.log(`\ngateway nodes: ${nodeCount}`);
console.log('scenario              calls  p50_ms  p99_ms  max_ms  startup_p99  loss_%  conceal_%  gaps_%  cpu_ms/call-s  rss_MB/call  gw_cpu_%  steal_%');
for (const r of results) {
  console.log(
    `${r.scenario.padEnd(20)}  ${String(r.calls).padStart(5)}  ${String(r.latencyP50Ms).padStart(6)}  ${String(r.latencyP99Ms).padStart(6)}  ${String(r.latencyMaxMs).padStart(6)}  ${String(r.startupP99Ms).padStart(11)}  ${String(r.lossPercent).padStart(6)}  ${String(r.gatewayConcealedPercent).padStart(9)}  ${String(r.pacerGapPercent).padStart(6)}  ${String(r.cpuMsPerCallSecond).padStart(13)}  ${String(r.rssMbPerCall).padStart(11)}  ${String(r.gatewayCpuPercentOfOneCore).padStart(8)}  ${String(r.hostStealPercent).padStart(7)}`,
  );
}
for (const s of new Set(results.map((r) => r.scenario))) {
  const clean = results.filter((r) => r.scenario === s && r.lossPercent < LOSS_LIMIT && r.connected === r.calls).map((r) => r.calls);
  console.log(`${s}: most calls carried at < ${LOSS_LIMIT} % loss: ${clean.length ? Math.max(...clean) : 'none of the steps'}`);
}
console.log(JSON.stringify({ bench: 'media_path', results }));
process.exit(0);
