// Where the gateway's own share of receiving one 20 ms audio.input goes (bench/stream/ws-recv-cost.ts
// measures it as a whole): the UTF-8 decode and JSON.parse, the field checks, base64, µ-law and the
// Framer, each timed alone over the same messages. Prints ns per message; asserts nothing.
//   npx tsx bench/stream/parse-cost.ts [--messages 200000]
import { parseClientMessage } from '../../src/stream/index.js';
import { Framer, mulawDecodeInto } from '../../src/media/index.js';
import { numberArg } from '../bench-args.js';

const N = numberArg('messages', 200_000);
const payload = Buffer.from(Array.from({ length: 160 }, (_, k) => (k * 37) & 0xff)).toString('base64');
const messages = Array.from({ length: 64 }, (_, k) =>
  Buffer.from(
    JSON.stringify({
      type: 'audio.input',
      sequence: k,
      timestamp_ms: k * 20,
      speaker: 'customer',
      audio: { encoding: 'mulaw', sample_rate_hz: 8000, payload },
    }),
  ),
);
const texts = messages.map((m) => m.toString('utf8'));
const bytes = Buffer.from(payload, 'base64');
const pcm = new Int16Array(1600);
let frames = 0;
const framer = new Framer(() => frames++);
let sink = 0;

const steps: [string, (k: number) => void][] = [
  ['utf8 decode', (k) => (sink += messages[k & 63]!.toString('utf8').length)],
  ['JSON.parse', (k) => (sink += (JSON.parse(texts[k & 63]!) as { sequence: number }).sequence)],
  ['base64 decode', () => (sink += Buffer.from(payload, 'base64').length)],
  ['µ-law decode', () => (sink += mulawDecodeInto(bytes, pcm)[7] ?? 0)],
  ['Framer (one frame)', () => framer.push(pcm.subarray(0, 160))],
  [
    'parseClientMessage, whole',
    (k) => {
      const r = parseClientMessage(messages[k & 63]!, 1 << 20);
      if (r.ok) sink += r.msg.type.length;
    },
  ],
];

for (let round = 0; round < 3; round++) {
  const line = steps.map(([name, fn]) => {
    for (let k = 0; k < 20_000; k++) fn(k); // warm
    const t = process.hrtime.bigint();
    for (let k = 0; k < N; k++) fn(k);
    return `${name} ${(Number(process.hrtime.bigint() - t) / N).toFixed(0)}`;
  });
  console.log(`round ${round + 1}, ns per message: ${line.join(', ')}`);
}
if (sink === 42 && frames < 0) console.log(sink); // keeps the work observable
