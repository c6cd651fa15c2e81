// AI agent benchmark. Prints figures; asserts nothing.
//
//   (1) response latency: end of the customer's speech → first agent audio frame, with the embedded
//       engines (pocketsphinx, espeak-ng) and the scripted brain, in one process (no sockets): the
//       customer's flite speech is fed in real time (20 ms frames on a timer), the VAD hangover
//       (300 ms in the agent modes) counts as part of the latency, as a caller hears it.
//   (2) barge-in stop time: the customer talks over a long reply; time from the barge-in decision
//       (after the minimum speech) to the last agent frame released.
//   (3) concurrent agent sessions per core at conversational pace: M sessions share the engines and
//       one media clock; each asks `turns` questions, listens to the reply to its end and pauses
//       PAUSE_MS before the next (the customer talks ~25 % of the time); starts are spread evenly
//       over one turn cycle. Sessions per core = the largest M whose end of speech → first agent
//       audio meets the aim (p50 < 1.0 s, p99 < 1.5 s), divided by the cores.
//
//   Every figure is taken for each turn-taking mode in --early (default "off,held"): `off` answers
//   at the final; `held` starts the reply from the recognizer's settled hypothesis and plays it once
//   the final confirms it (AGENT_EARLY_PARTIAL); `spoken` plays it at once (AGENT_EARLY_SPEAK).
//   Modes are interleaved trial by trial so all see the same machine.
//
//   npx tsx bench/agent/run.ts [--trials 10] [--sessions 1,2,4,6,8] [--turns 3] [--early off,held,spoken]
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config/index.js';
import { createEngines } from '../../src/speech/index.js';
import { LiveSession, MediaClock, type SessionOutput } from '../../src/sessions/index.js';
import { AgentRuntime, ScriptedBrain, ToolRunner, type AgentDefinition } from '../../src/agents/index.js';
import { concatPcm, silence, synthesizeSpeech } from '../../test/helpers/speech-audio.js';
import { defined } from '../defined.js';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '10' },
    sessions: { type: 'string', default: '1,2,4,6,8' },
    turns: { type: 'string', default: '3' },
    early: { type: 'string', default: 'off,held' },
  },
});
type Mode = 'off' | 'held' | 'spoken';
const modes = args.early.split(',').map((m) => m.trim() as Mode);
if (modes.some((m) => !['off', 'held', 'spoken'].includes(m))) throw new Error('--early takes off, held, spoken');
const trials = Number(args.trials);
const sessionCounts = args.sessions
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const turns = Number(args.turns);
const PAUSE_MS = 2000;
const CYCLE_MS = 8000;
const config = loadConfig();
const engines = await createEngines(config.engines);
const clock = new MediaClock();

const agent: AgentDefinition = {
  id: 'agt_bench',
  orgId: 'org_bench',
  name: 'Bench',
  language: 'en',
  greeting: null,
  instructions: null,
  brain: { provider: 'scripted' },
  intents: [
    { name: 'opening_hours', examples: ['what are your opening hours'], reply: 'We are open from nine to five. On Saturdays we close at noon.' },
    {
      name: 'long',
      examples: ['i need help with my order'],
      reply:
        'Of course. Orders usually arrive within three days. You can follow yours in the app. If it is late, we send a new one for free. Is there anything else I can do for you today?',
    },
  ],
  tools: [],
  escalation: null,
  knowledgeBase: [],
  voice: null,
};

const earlyTotals = { started: 0, confirmed: 0, cancelled: 0 };

function session(i: number | string, early: Mode) {
  const outputs: Array<SessionOutput & { at: number }> = [];
  const customerFinals: number[] = [];
  const agentFinals: number[] = [];
  const s = new LiveSession({
    id: `sess_bench_${i}`,
    orgId: 'org_bench',
    mode: 'ai_agent',
    sourceLanguage: 'en',
    targetLanguage: 'en',
    voice: {},
    engines,
    defaultLanguage: 'en',
    clock,
    awaitsLeg: false,
    vad: { engine: config.vad.engine, sileroModel: config.vad.sileroModel }, // the node's configured VAD (VAD_ENGINE)
    hooks: { firstAudio() {}, activity() {}, async storeTurn() {} },
    agent: {
      language: 'en',
      bargeInMinSpeechMs: config.agents.bargeInMinSpeechMs,
      earlyPartial: early !== 'off',
      createRuntime: (host) =>
        new AgentRuntime({
          agent,
          brain: new ScriptedBrain(agent),
          host,
          speakBeforeFinal: early === 'spoken',
          tools: new ToolRunner({ timeoutMs: 1000, signingSecrets: async () => [] }),
        }),
    },
  });
  if (process.env.BENCH_DEBUG) {
    console.log(JSON.stringify(s.plan));
    s.on('partial', (p) => console.log('partial', p.text, performance.now().toFixed(0)));
    s.on('final', (f) => console.log('final', f.speaker, f.text, performance.now().toFixed(0)));
    s.on('error', (e) => console.log('error', e));
  }
  s.on('final', (f) => (f.speaker === 'customer' ? customerFinals : agentFinals).push(performance.now()));
  s.on('output', (o) => outputs.push({ ...(o as SessionOutput), at: performance.now() }));
  const close = () => {
    const st = s.agentRuntime?.earlyStats;
    if (st) for (const k of ['started', 'confirmed', 'cancelled'] as const) earlyTotals[k] += st[k];
    s.close('bench');
  };
  return { s, outputs, customerFinals, agentFinals, close };
}

const modeName = (early: Mode) => ({ off: 'at the final', held: 'early, held until the final', spoken: 'early, spoken before the final' })[early];

/** Feeds PCM in real time; resolves when done. `onSpeechEnd` fires at the end of `speechSamples`. */
function feed(s: LiveSession, pcm: Int16Array, speechEndSample: number, onSpeechEnd: () => void): Promise<void> {
  return new Promise((resolve) => {
    const start = performance.now();
    let off = 0;
    const step = () => {
      const due = Math.floor((performance.now() - start) / 20) + 1;
      while (off / 160 < due && off + 160 <= pcm.length) {
        s.pushAudio('customer', pcm.slice(off, off + 160));
        off += 160;
        if (off >= speechEndSample && off - 160 < speechEndSample) onSpeechEnd();
      }
      if (off + 160 > pcm.length) return resolve();
      setTimeout(step, 5);
    };
    step();
  });
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (!cond() && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const lead = silence(400);
const question = await synthesizeSpeech('what are your opening hours', { voice: 'flite' });
const byMode = new Map(modes.map((m) => [m, { latencies: [] as number[], afterFinal: [] as number[], toFinal: [] as number[] }]));
for (let i = 0; i < trials; i++) {
  for (const early of modes) {
    const { latencies, afterFinal, toFinal } = byMode.get(early)!;
    const { s, outputs, customerFinals, close } = session(`${i}_${early}`, early);
    s.carrierAttached();
    let speechEnd = 0;
    await feed(s, concatPcm(lead, question, silence(1500)), lead.length + question.length, () => {
      speechEnd = performance.now();
      if (process.env.BENCH_DEBUG) console.log('speech end', speechEnd.toFixed(0));
    });
    await waitFor(() => outputs.some((o) => o.speaker === 'agent'), 60_000);
    await waitFor(() => customerFinals.length > 0, 60_000);
    const first = outputs.find((o) => o.speaker === 'agent' && o.at > speechEnd);
    if (first) latencies.push(first.at - speechEnd);
    const final = customerFinals[0];
    if (final !== undefined) toFinal.push(final - speechEnd);
    if (first && final !== undefined) afterFinal.push(first.at - final);
    close();
  }
}
for (const early of modes) {
  const { latencies, afterFinal, toFinal } = byMode.get(early)!;
  console.log(`answering ${modeName(early)}:`);
  console.log(
    `  recognizer's part: end of speech → customer final (VAD hangover + decoding): p50 ${pct(toFinal, 50)?.toFixed(0)} ms, max ${Math.max(...toFinal).toFixed(0)} ms`,
  );
  console.log(
    `  customer final → first agent audio frame (negative: the reply started before the final): p50 ${pct(afterFinal, 50)?.toFixed(0)} ms, max ${Math.max(...afterFinal).toFixed(0)} ms`,
  );
  console.log(
    `  end of speech → first agent audio frame (n=${latencies.length}/${trials}): p50 ${pct(latencies, 50)?.toFixed(0)} ms, p99 ${pct(latencies, 99)?.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms`,
  );
}
console.log(`  early turns so far: ${JSON.stringify(earlyTotals)}`);

const stops: number[] = [];
const order = await synthesizeSpeech('i need help with my order', { voice: 'flite' });
for (let i = 0; i < trials; i++) {
  const { s, outputs, close } = session(100 + i, defined(modes[modes.length - 1], 'mode'));
  s.carrierAttached();
  // Ask the long question, wait for the reply to start, then talk over it.
  await feed(s, concatPcm(lead, order, silence(600)), 0, () => undefined);
  await waitFor(() => outputs.some((o) => o.speaker === 'agent'), 60_000);
  await new Promise((r) => setTimeout(r, 500));
  await feed(s, concatPcm(silence(100), question, silence(400)), 0, () => undefined);
  const at = s.lastBargeInAt;
  // The cut reply's frames come back to back (one per 20 ms tick); the reply to what the customer
  // said over it comes after a gap and is not part of the stop time.
  let last = at;
  for (const o of outputs) {
    if (o.speaker !== 'agent' || o.at < at) continue;
    if (o.at - last > 100) break;
    last = o.at;
  }
  if (at > 0) stops.push(last - at);
  close();
}
console.log(
  `barge-in decision → last agent frame (n=${stops.length}/${trials}): p50 ${pct(stops, 50)?.toFixed(0)} ms, max ${Math.max(...stops).toFixed(0)} ms (decision comes ${config.agents.bargeInMinSpeechMs} ms of voiced speech after the customer starts)`,
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One caller at conversational pace: ask, hear the reply out, pause; latency of every turn. */
async function conversation(id: string, early: Mode, offsetMs: number, latencies: number[]): Promise<number> {
  const { s, outputs, agentFinals, close } = session(id, early);
  s.carrierAttached();
  await sleep(offsetMs);
  let answered = 0;
  for (let k = 0; k < turns; k++) {
    let speechEnd = Infinity;
    const repliesBefore = agentFinals.length;
    await feed(s, concatPcm(lead, question, silence(1500)), lead.length + question.length, () => (speechEnd = performance.now()));
    await waitFor(() => outputs.some((o) => o.speaker === 'agent' && o.at > speechEnd), 60_000);
    const first = outputs.find((o) => o.speaker === 'agent' && o.at > speechEnd);
    if (first) {
      latencies.push(first.at - speechEnd);
      answered++;
    }
    await waitFor(() => agentFinals.length > repliesBefore, 60_000);
    await sleep(PAUSE_MS);
  }
  close();
  return answered;
}

const cores = availableParallelism();
console.log(
  `concurrent agent sessions, conversational pace (${turns} turns each, starts spread over ${CYCLE_MS / 1000} s, ${PAUSE_MS / 1000} s pause after each reply), ${cores} cores:`,
);
const best = new Map(modes.map((m) => [m, 0]));
for (const m of sessionCounts) {
  for (const early of modes) {
    const lat: number[] = [];
    const answered = await Promise.all(Array.from({ length: m }, (_, i) => conversation(`conv_${m}_${i}_${early}`, early, (i * CYCLE_MS) / m, lat)));
    const p50 = pct(lat, 50) ?? Infinity;
    const p99 = pct(lat, 99) ?? Infinity;
    const meets = lat.length === m * turns && p50 < 1000 && p99 < 1500;
    if (meets) best.set(early, Math.max(best.get(early) ?? 0, m));
    console.log(
      `  ${m} sessions, answering ${modeName(early)}: end of speech → first agent audio p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, answered ${answered.reduce((a, b) => a + b, 0)}/${m * turns}${meets ? ' (meets the aim)' : ''}`,
    );
  }
}
for (const early of modes) {
  const b = best.get(early) ?? 0;
  console.log(
    `  → answering ${modeName(early)}: largest M meeting p50 < 1.0 s and p99 < 1.5 s: ${b} on ${cores} cores = ${(b / cores).toFixed(1)} sessions per core`,
  );
}
console.log(
  `early turns in the whole run: ${JSON.stringify(earlyTotals)} (confirmed: the final asked the same; cancelled: the reply was cut and the final answered)`,
);
await engines.close();
process.exit(0);
