// One signed POST to an endpoint, connected to the address the URL guard checked (no second DNS
// lookup between the check and the connection). Success is a 2xx status within the deadline
// (SPEC "Webhook delivery" 2: 30 s); redirects are not followed (a 3xx is a failure).
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './url-guard.js';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** Network, TLS or timeout error when no status was received. */
  error: string | null;
  durationMs: number;
  /** What the receiver answered, bounded for the delivery log: a few headers and the body's first 4 KB. */
  responseHeaders?: Record<string, string>;
  responseBody?: string;
}

/** Bytes of the response body kept for the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 4096;
const MAX_HEADERS = 40;
const MAX_HEADER_VALUE = 256;

function headerExcerpt(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length && Object.keys(out).length < MAX_HEADERS; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    if (name === 'set-cookie') continue; // the receiver's cookies are none of the log's business
    out[name] = out[name] !== undefined ? `${out[name]}, ${raw[i + 1] ?? ''}`.slice(0, MAX_HEADER_VALUE) : (raw[i + 1] ?? '').slice(0, MAX_HEADER_VALUE);
  }
  return out;
}

const MAX_AGENTS = 256;

/** Keep-alive agents per (origin, pinned address): a reused socket always goes to a checked address. */
export class WebhookHttpSender {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxSocketsPerAgent = 32) {}

  private agentFor(target: ResolvedTarget): http.Agent {
    const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
    let agent = this.agents.get(key);
    if (agent) {
      this.agents.delete(key); // re-insert: the map's order is least-recently used first
      this.agents.set(key, agent);
      return agent;
    }
    const opts = { keepAlive: true, maxSockets: this.maxSocketsPerAgent, maxFreeSockets: 8, timeout: 60_000 };
    agent = target.url.protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
    this.agents.set(key, agent);
    if (this.agents.size > MAX_AGENTS) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, http.Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return agent;
  }

  send(target: ResolvedTarget, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendResult> {
    const started = performance.now();
    const pinned: LookupFunction = (_host, options, cb) => {
      // Node 20 asks for all addresses (autoSelectFamily) or for one; answer with the checked one.
      if ((options as { all?: boolean }).all)
        (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    };
    const mod = target.url.protocol === 'https:' ? https : http;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...r, durationMs: Math.round(performance.now() - started) });
      };
      const req = mod.request(
        target.url,
        {
          method: 'POST',
          agent: this.agentFor(target),
          lookup: pinned,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const responseHeaders = headerExcerpt(res.rawHeaders);
          // Keep the first 4 KB for the log and drain the rest so the socket can be reused; the
          // attempt is over at the end of the body or once the excerpt is full, whichever is first.
          const chunks: Buffer[] = [];
          let kept = 0;
          const done = () => {
            const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replace(/\0/g, ''); // PostgreSQL text takes no NUL
            finish({ ok: status >= 200 && status < 300, statusCode: status, error: null, responseHeaders, responseBody });
          };
          res.on('data', (chunk: Buffer) => {
            if (kept >= RESPONSE_EXCERPT_BYTES) return;
            chunks.push(chunk);
            kept += chunk.length;
            if (kept >= RESPONSE_EXCERPT_BYTES) done();
          });
          res.on('end', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        finish({ ok: false, statusCode: null, error: `timeout after ${timeoutMs} ms` });
        req.destroy(new Error('timeout'));
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, statusCode: null, error: err.code ? `${err.code}: ${err.message}` : err.message }));
      req.end(body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
