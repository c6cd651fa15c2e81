// One remote engine endpoint (an STT, TTS or translation base URL) seen from this node: every
// request gets a deadline, retries with exponential backoff (honouring `retry-after` on 429/503),
// and a circuit breaker so a dead endpoint fails fast instead of holding every session's turn for
// the full timeout. Hand-written (about 100 lines) because the well-kept breakers (opossum) wrap
// one function call and cannot see HTTP status or `retry-after`.

export interface EndpointPolicy {
  /** Deadline of one attempt, response body included. */
  timeoutMs: number;
  /** Attempts after the first, for 429, 5xx and network errors. */
  retries: number;
  /** First backoff; doubled each retry, with jitter; `retry-after` wins when larger. */
  backoffMs: number;
  /** Longest single wait (a `retry-after: 3600` must not hold a live call). */
  maxBackoffMs: number;
  /** Consecutive failed requests that open the breaker. */
  breakerThreshold: number;
  /** How long the breaker stays open before one trial request is let through. */
  breakerCooldownMs: number;
}

export const DEFAULT_POLICY: Omit<EndpointPolicy, 'timeoutMs'> = {
  retries: 2,
  backoffMs: 200,
  maxBackoffMs: 5000,
  breakerThreshold: 5,
  breakerCooldownMs: 10_000,
};

/** A failed engine request; `status` is the HTTP status when the server answered. */
export class EngineHttpError extends Error {
  constructor(
    readonly kind: 'timeout' | 'unavailable' | 'rejected' | 'circuit_open',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'EngineHttpError';
  }
}

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504]);

/** OpenAI-style error bodies: {"error":{"message":…,"type":…,"code":…}}; otherwise the text. */
async function describeError(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: string; code?: string } | string; detail?: unknown; message?: string };
    if (typeof body.error === 'object' && body.error?.message) return body.error.message;
    if (typeof body.error === 'string') return body.error;
    if (body.message) return body.message;
    // ElevenLabs: {"detail":{"status":"invalid_api_key","message":"…"}} (or a FastAPI list for 422).
    const detail = body.detail as { message?: string } | undefined;
    if (detail && typeof detail === 'object' && !Array.isArray(detail) && detail.message) return detail.message;
    if (body.detail) return JSON.stringify(body.detail);
  } catch {
    // not JSON: fall through
  }
  return text.slice(0, 200) || res.statusText;
}

function retryAfterMs(res: Response): number {
  const v = res.headers.get('retry-after-ms') ?? null;
  if (v && Number.isFinite(Number(v))) return Number(v);
  const s = res.headers.get('retry-after');
  if (!s) return 0;
  if (Number.isFinite(Number(s))) return Number(s) * 1000;
  const at = Date.parse(s);
  return Number.isNaN(at) ? 0 : Math.max(0, at - Date.now());
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class EngineEndpoint {
  private failures = 0;
  private openUntil = 0;

  constructor(
    readonly label: string,
    private readonly policy: EndpointPolicy,
  ) {}

  get breakerOpen(): boolean {
    return Date.now() < this.openUntil;
  }

  /**
   * Sends the request (init is rebuilt per attempt: a multipart body can be sent once only) and
   * returns the first 2xx response. Its body must be read before `signal` fires (timeoutMs).
   */
  async fetch(url: string, init: () => RequestInit): Promise<Response> {
    if (this.breakerOpen) {
      throw new EngineHttpError('circuit_open', `${this.label}: circuit open after ${this.failures} consecutive failures`);
    }
    let lastError: EngineHttpError | null = null;
    for (let attempt = 0; attempt <= this.policy.retries; attempt++) {
      let wait = 0;
      try {
        const res = await fetch(url, { ...init(), signal: AbortSignal.timeout(this.policy.timeoutMs) });
        if (res.ok) {
          this.failures = 0;
          return res;
        }
        const message = `${this.label}: HTTP ${res.status}: ${await describeError(res)}`;
        if (!RETRYABLE.has(res.status)) {
          // The server is up and said no (bad key, bad input): not a reason to open the breaker.
          throw new EngineHttpError('rejected', message, res.status);
        }
        lastError = new EngineHttpError('unavailable', message, res.status);
        wait = retryAfterMs(res);
      } catch (err) {
        if (err instanceof EngineHttpError) throw err;
        const e = err as Error;
        lastError =
          e.name === 'TimeoutError' || e.name === 'AbortError'
            ? new EngineHttpError('timeout', `${this.label}: no answer within ${this.policy.timeoutMs} ms`)
            : new EngineHttpError('unavailable', `${this.label}: ${e.message}${e.cause ? ` (${(e.cause as Error).message})` : ''}`);
      }
      if (attempt < this.policy.retries) {
        const backoff = this.policy.backoffMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
        await sleep(Math.min(this.policy.maxBackoffMs, Math.max(backoff, wait)));
      }
    }
    this.recordFailure();
    throw lastError!;
  }

  /** A failure seen after the response started (body cut off, timeout while streaming). */
  recordFailure(): void {
    this.failures++;
    if (this.failures >= this.policy.breakerThreshold) this.openUntil = Date.now() + this.policy.breakerCooldownMs;
  }
}
