// What the framing layer costs per message, measured as CPU time (stable on a loaded machine, unlike
// calls per second): a well-formed INVITE with SDP through the `sip` package's parser alone (the
// path before the framing layer) and through frameDatagram + the same parser (the path now), and
// the same over TCP (StreamFramer), alternated in rounds within one process.
//   npx tsx bench/sip/framing-cost.ts [iterations per round, default 100000]
// Prints figures; asserts nothing.
import sip from 'sip';
import { DEFAULT_SIP_LIMITS, frameDatagram, StreamFramer } from '../../src/telephony/sip/framing.js';

const iterations = Number(process.argv[2] ?? 100_000);
const sdp = [
  'v=0',
  'o=carrier 53655765 2353687637 IN IP4 203.0.113.10',
  's=-',
  'c=IN IP4 203.0.113.10',
  't=0 0',
  'm=audio 30000 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=fmtp:101 0-16',
  'a=ptime:20',
  'a=sendrecv',
  '',
].join('\r\n');
const invite = Buffer.from(
  [
    'INVITE sip:+14155550100@198.51.100.1:5060 SIP/2.0',
    'Via: SIP/2.0/UDP 203.0.113.10:5060;branch=z9hG4bK776asdhds;rport',
    'Max-Forwards: 70',
    'From: "Alice" <sip:+14155550111@203.0.113.10>;tag=1928301774',
    'To: <sip:+14155550100@198.51.100.1>',
    'Call-ID: a84b4c76e66710@203.0.113.10',
    'CSeq: 314159 INVITE',
    'Contact: <sip:+14155550111@203.0.113.10:5060>',
    'User-Agent: carrier-sbc/1.0',
    'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO',
    'Supported: timer',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n'),
  'latin1',
);

let sink = 0;
function cpuMicros(fn: () => void): number {
  const c0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / iterations;
}
const parseOnly = (): void => {
  sink += sip.parse(invite.toString('latin1'))?.headers ? 1 : 0;
};
const framedDatagram = (): void => {
  const f = frameDatagram(invite, DEFAULT_SIP_LIMITS);
  if (f?.kind === 'message') sink += sip.parse(f.text)?.headers ? 1 : 0;
};
const framer = new StreamFramer(DEFAULT_SIP_LIMITS);
const framedStream = (): void => {
  for (const f of framer.push(invite)) if (f.kind === 'message') sink += sip.parse(f.text)?.headers ? 1 : 0;
};

// Warm-up (JIT), then rounds alternating the paths.
for (const fn of [parseOnly, framedDatagram, framedStream]) for (let i = 0; i < 20_000; i++) fn();
const rounds: { parseOnly: number; datagram: number; stream: number }[] = [];
for (let r = 0; r < 5; r++) rounds.push({ parseOnly: cpuMicros(parseOnly), datagram: cpuMicros(framedDatagram), stream: cpuMicros(framedStream) });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const m = {
  parseOnlyUs: +median(rounds.map((r) => r.parseOnly)).toFixed(2),
  framedDatagramUs: +median(rounds.map((r) => r.datagram)).toFixed(2),
  framedStreamUs: +median(rounds.map((r) => r.stream)).toFixed(2),
};
console.log(
  JSON.stringify(
    {
      bench: 'sip_framing_cost',
      messageBytes: invite.length,
      iterationsPerRound: iterations,
      rounds: rounds.length,
      medianCpuMicrosPerMessage: m,
      sink: sink > 0,
    },
    null,
    2,
  ),
);
