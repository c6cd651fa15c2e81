// Raw SIP over UDP and TCP for tests that send what no SIP stack would: hand-written messages,
// floods, oversized and malformed input. Responses are read as text, first line and headers.
import dgram from 'node:dgram';
import net from 'node:net';
import { defined } from './defined.js';

export interface RawResponse {
  status: number;
  reason: string;
  text: string;
  header(name: string): string | undefined;
}

export function parseRawResponse(text: string): RawResponse {
  const head = defined(text.split('\r\n\r\n')[0], 'SIP head');
  const lines = head.split('\r\n');
  const m = /^SIP\/2\.0 (\d{3}) ?(.*)$/.exec(defined(lines[0], 'status line'));
  if (!m) throw new Error(`not a SIP response: ${lines[0]}`);
  return {
    status: Number(m[1]),
    reason: defined(m[2], 'reason phrase'),
    text,
    header(name) {
      const l = lines.find((x) => x.toLowerCase().startsWith(`${name.toLowerCase()}:`));
      return l?.slice(l.indexOf(':') + 1).trim();
    },
  };
}

/** Fills {{port}}, {{callId}}, {{branch}} and {{transport}} in a hand-written message; CRLF line ends. */
export function rawMessage(lines: string[], vars: Record<string, string | number>, body = ''): string {
  const fill = (s: string) => s.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? `{{${k}}}`));
  return `${lines.map(fill).join('\r\n')}\r\n\r\n${body}`;
}

/** An OPTIONS ping from 127.0.0.1:`port` over `transport`, with `extra` header lines (Content-Length among them, or not). */
export const optionsMessage = (callId: string, transport: 'UDP' | 'TCP', port: number, extra: string[] = []): string =>
  rawMessage(
    [
      'OPTIONS sip:probe@127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/${transport} 127.0.0.1:${port};branch=z9hG4bK${callId}`,
      'From: <sip:probe@127.0.0.1>;tag=p1',
      'To: <sip:probe@127.0.0.1>',
      `Call-ID: ${callId}`,
      'CSeq: 1 OPTIONS',
      'Max-Forwards: 70',
      ...extra,
    ],
    {},
  );

/** Sends one datagram and resolves with the first final response (or null after `timeoutMs`). */
export async function udpExchange(port: number, message: string | Buffer, timeoutMs = 5000): Promise<RawResponse | null> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.close();
      resolve(null);
    }, timeoutMs);
    s.on('message', (buf) => {
      const rs = parseRawResponse(buf.toString('latin1'));
      if (rs.status < 200) return;
      clearTimeout(timer);
      s.close();
      resolve(rs);
    });
    s.send(typeof message === 'string' ? Buffer.from(message, 'latin1') : message, port, '127.0.0.1');
  });
}

/** A TCP connection that collects whole responses (framed by Content-Length) and its close. */
export class TcpPeer {
  readonly responses: RawResponse[] = [];
  closed = false;
  private buf = '';
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (;;) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(this.buf.slice(0, end))?.[1] ?? 0);
        if (this.buf.length < end + 4 + len) break;
        this.responses.push(parseRawResponse(this.buf.slice(0, end + 4 + len)));
        this.buf = this.buf.slice(end + 4 + len);
      }
      this.notify();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  static connect(port: number): Promise<TcpPeer> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new TcpPeer(s)));
      s.once('error', reject);
    });
  }

  get localPort(): number {
    return this.socket.localPort ?? 0;
  }

  write(data: string | Buffer): boolean {
    if (this.socket.destroyed) return false;
    return this.socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data);
  }

  private notify(): void {
    this.waiters.splice(0).forEach((w) => w());
  }

  /** Waits until `cond` holds (checked on every response or close), failing after `timeoutMs`. */
  async until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('TCP peer: condition not met in time');
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  async finalResponse(timeoutMs = 10_000): Promise<RawResponse> {
    await this.until(() => this.responses.some((r) => r.status >= 200), timeoutMs);
    return this.responses.find((r) => r.status >= 200)!;
  }

  close(): void {
    this.socket.destroy();
  }
}
