// A real HTTP receiver on loopback for webhook tests: records every request (raw body, headers, time)
// and answers as the test decides (status, or hang until the connection is dropped). Signatures are
// checked here with node:crypto, written from the README's description, independently of the product.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  receivedAt: number;
}

/** 'hang' never answers (the sender must time out). */
export type Reply = number | 'hang';

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly waiters: (() => void)[] = [];
  private readonly hung = new Set<http.ServerResponse>();
  /** Decides the reply to each request; default 200. */
  reply: (req: ReceivedRequest, index: number) => Reply = () => 200;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const r: ReceivedRequest = { path: req.url ?? '', headers: req.headers, raw, body, receivedAt: Date.now() };
        const index = receiver.requests.push(r) - 1;
        const reply = receiver.reply(r, index);
        for (const w of receiver.waiters.splice(0)) w();
        if (reply === 'hang') {
          receiver.hung.add(res);
          res.on('close', () => receiver.hung.delete(res));
          return;
        }
        res.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests whose path is `path`. */
  at(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Resolves once `predicate` holds over the requests received, or rejects after `timeoutMs`. */
  async waitFor(predicate: (reqs: ReceivedRequest[]) => boolean, timeoutMs = 30_000, what = 'webhook requests'): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; got ${this.requests.length}: ${this.requests.map((r) => `${r.path} ${r.body?.type}`).join(', ')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.requests;
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Verifies `service-signature: t=<unix s>,v1=<hex>[,v1=<hex>]` the way a receiver would: HMAC-SHA256
 * of "<t>.<raw body>" under `secret` equals one of the v1 values, and t is within `toleranceS`.
 */
export function signatureValid(header: string | string[] | undefined, raw: string, secret: string, toleranceS = 300): boolean {
  if (typeof header !== 'string') return false;
  const items = header.split(',').map((p) => p.split('=', 2) as [string, string]);
  const t = Number(items.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceS) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex'));
  return items.filter(([k]) => k === 'v1').some(([, v]) => v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}

export function v1Count(header: string | string[] | undefined): number {
  return typeof header === 'string' ? header.split(',').filter((p) => p.startsWith('v1=')).length : 0;
}
