// An RFC 4475 torture suite of our own: each message below is written from the RFC's description of
// a test case (section numbers cited), not copied from it. Every case runs over UDP and over TCP
// against the real SIP front and checks the final answer and the reason phrase naming the fault.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, type TelephonyFixture } from '../helpers/sip-harness.js';
import { TcpPeer, rawMessage, udpExchange, type RawResponse } from '../helpers/sip-raw.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => fx?.stop());

interface TortureCase {
  name: string;
  lines: string[];
  body?: string;
  status: number;
  reason?: string;
  /** Cases whose framing only means something on one transport. */
  only?: 'udp' | 'tcp';
}

const via = 'Via: SIP/2.0/{{transport}} 127.0.0.1:{{port}};branch=z9hG4bK{{callId}}';
const std = (method: string, uri = 'sip:{{number}}@127.0.0.1') => [
  `${method} ${uri} SIP/2.0`,
  via,
  'From: "Torture" <sip:torture@127.0.0.1>;tag=tt1',
  'To: <sip:{{number}}@127.0.0.1>',
  'Call-ID: {{callId}}',
  `CSeq: 8 ${method}`,
  'Max-Forwards: 70',
];
const sdp = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\n';
const invite = (extra: string[], body = sdp): Pick<TortureCase, 'lines' | 'body'> => ({
  lines: [...std('INVITE'), 'Contact: <sip:torture@127.0.0.1:{{port}}>', ...extra, `Content-Length: ${body.length}`],
  body,
});

const CASES: TortureCase[] = [
  // §3.1.1.1-style: a valid message that is hard to read — compact header names, odd case, folded
  // header value, extra spaces around colons. It must be accepted.
  {
    name: 'valid: compact forms, folding and LWS (§3.1.1.1)',
    lines: [
      'OPTIONS sip:{{number}}@127.0.0.1 SIP/2.0',
      'v:  SIP/2.0/{{transport}} 127.0.0.1:{{port}}',
      ' ;branch=z9hG4bK{{callId}}',
      'f :<sip:torture@127.0.0.1>;tag=tt2',
      'T: <sip:{{number}}@127.0.0.1>',
      'i: {{callId}}',
      'cSeQ:   9 OPTIONS',
      'Max-Forwards: 70',
      'l: 0',
    ],
    status: 200,
  },
  // §3.1.2.4: a negative Content-Length.
  { name: 'negative Content-Length (§3.1.2.4)', lines: [...std('OPTIONS'), 'Content-Length: -999'], status: 400, reason: 'Bad Content-Length' },
  // §3.1.2.5: numeric fields far larger than their grammar allows.
  {
    name: 'oversized CSeq number (§3.1.2.5)',
    lines: [...std('OPTIONS').filter((l) => !l.startsWith('CSeq')), 'CSeq: 36893488147419103232 OPTIONS', 'Content-Length: 0'],
    status: 400,
    reason: 'Bad CSeq',
  },
  {
    name: 'oversized Max-Forwards (§3.1.2.5)',
    lines: [...std('OPTIONS').filter((l) => !l.startsWith('Max-Forwards')), 'Max-Forwards: 300000000000', 'Content-Length: 0'],
    status: 400,
    reason: 'Bad Max-Forwards',
  },
  // §3.1.2.2: Content-Length claims more bytes than the datagram holds.
  {
    name: 'Content-Length beyond the datagram (§3.1.2.2)',
    lines: [...std('OPTIONS'), 'Content-Length: 5000'],
    body: 'short',
    status: 400,
    reason: 'Content-Length Exceeds Message',
    only: 'udp',
  },
  // §3.1.2.6: a display name whose quote is never closed.
  {
    name: 'unterminated quoted display name (§3.1.2.6)',
    lines: [...std('OPTIONS').map((l) => (l.startsWith('To:') ? 'To: "Mr. Torture <sip:{{number}}@127.0.0.1>' : l)), 'Content-Length: 0'],
    status: 400,
    reason: 'Bad To Header',
  },
  // §3.1.2.7: the Request-URI enclosed in angle brackets.
  {
    name: 'Request-URI in <> (§3.1.2.7)',
    lines: [...std('OPTIONS', '<sip:{{number}}@127.0.0.1>'), 'Content-Length: 0'],
    status: 400,
    reason: 'Malformed Request-URI',
  },
  // §3.1.2.8: whitespace inside the Request-URI.
  {
    name: 'LWS inside the Request-URI (§3.1.2.8)',
    lines: [...std('OPTIONS', 'sip:{{number}}@127.0.0.1;param = x'), 'Content-Length: 0'],
    status: 400,
    reason: 'Malformed Request Line',
  },
  // §3.1.2.9/§3.1.2.10: several spaces between request-line elements, trailing space.
  {
    name: 'multiple SP in the request line (§3.1.2.9)',
    lines: [`OPTIONS  sip:{{number}}@127.0.0.1 SIP/2.0`, ...std('OPTIONS').slice(1), 'Content-Length: 0'],
    status: 400,
    reason: 'Malformed Request Line',
  },
  {
    name: 'trailing SP after the version (§3.1.2.10)',
    lines: [`OPTIONS sip:{{number}}@127.0.0.1 SIP/2.0 `, ...std('OPTIONS').slice(1), 'Content-Length: 0'],
    status: 400,
    reason: 'Malformed Request Line',
  },
  // §3.1.2.16: a request with an unknown protocol version.
  {
    name: 'SIP/7.0 (§3.1.2.16)',
    lines: [`OPTIONS sip:{{number}}@127.0.0.1 SIP/7.0`, ...std('OPTIONS').slice(1), 'Content-Length: 0'],
    status: 505,
    reason: 'Version Not Supported',
  },
  // §3.1.2.17: CSeq method differs from the request method.
  {
    name: 'CSeq method mismatch (§3.1.2.17)',
    lines: [...std('OPTIONS').map((l) => (l.startsWith('CSeq') ? 'CSeq: 8 INVITE' : l)), 'Content-Length: 0'],
    status: 400,
    reason: 'CSeq Method Mismatch',
  },
  // §3.1.2.19: the required headers are missing.
  {
    name: 'missing Call-ID (§3.1.2.19)',
    lines: [...std('OPTIONS').filter((l) => !l.startsWith('Call-ID')), 'Content-Length: 0'],
    status: 400,
    reason: 'Missing Call-ID Header',
  },
  {
    name: 'missing From (§3.1.2.19)',
    lines: [...std('OPTIONS').filter((l) => !l.startsWith('From')), 'Content-Length: 0'],
    status: 400,
    reason: 'Missing From Header',
  },
  // §3.1.2.12: two different Content-Length values.
  {
    name: 'conflicting Content-Length (§3.1.2.12)',
    lines: [...std('OPTIONS'), 'Content-Length: 0', 'Content-Length: 4'],
    body: 'abcd',
    status: 400,
    reason: 'Conflicting Content-Length',
    only: 'udp',
  },
  // §3.3.1/§3.1.2.18: a Request-URI with a scheme we do not know.
  {
    name: 'unknown Request-URI scheme (§3.3.1)',
    lines: [...std('OPTIONS', 'nobodyKnowsThisScheme:totallyopaquecontent'), 'Content-Length: 0'],
    status: 416,
    reason: 'Unsupported URI Scheme',
  },
  { name: 'tel: Request-URI (§3.3.1)', lines: [...std('INVITE', 'tel:+15550100'), 'Contact: <sip:t@127.0.0.1>', 'Content-Length: 0'], status: 416 },
  // §3.3.3: an extension in Require we do not support.
  {
    name: 'unknown Require option (§3.3.3)',
    lines: [...std('OPTIONS'), 'Require: nothingSupportsThis, nothingSupportsThisEither', 'Content-Length: 0'],
    status: 420,
    reason: 'Bad Extension',
  },
  // §3.3.4: an INVITE whose body is of a type we cannot read.
  { name: 'INVITE with an unknown body type (§3.3.4)', ...invite(['Content-Type: application/unknownformat']), status: 415, reason: 'Unsupported Media Type' },
  // RFC 3261 §16.3 step 2 (a UAS answers alike): Max-Forwards exhausted on an INVITE.
  {
    name: 'Max-Forwards: 0 on INVITE (§16.3)',
    body: sdp,
    lines: invite(['Content-Type: application/sdp']).lines.map((l) => (l.startsWith('Max-Forwards') ? 'Max-Forwards: 0' : l)),
    status: 483,
    reason: 'Too Many Hops',
  },
  // Stream framing (RFC 3261 §18.3): no Content-Length on TCP.
  { name: 'no Content-Length on a stream (§18.3)', lines: std('OPTIONS'), status: 400, reason: 'Missing Content-Length', only: 'tcp' },
];

async function exchange(transport: 'udp' | 'tcp', c: TortureCase, callId: string): Promise<RawResponse | null> {
  if (transport === 'udp') {
    const text = rawMessage(c.lines, { transport: 'UDP', port: 9, callId, number: fx.openNumber }, c.body ?? '');
    return udpExchange(fx.sipPort, text);
  }
  const peer = await TcpPeer.connect(fx.sipPort);
  try {
    peer.write(rawMessage(c.lines, { transport: 'TCP', port: peer.localPort, callId, number: fx.openNumber }, c.body ?? ''));
    return await peer.finalResponse();
  } finally {
    peer.close();
  }
}

describe.each(['udp', 'tcp'] as const)('RFC 4475 torture cases over %s', (transport) => {
  for (const [i, c] of CASES.entries()) {
    if (c.only && c.only !== transport) continue;
    it(
      c.name,
      async () => {
        const rs = await exchange(transport, c, `torture-${transport}-${i}-${Date.now()}`);
        expect(rs?.status).toBe(c.status);
        if (c.reason) expect(rs?.reason).toBe(c.reason);
      },
      20_000,
    );
  }
});
