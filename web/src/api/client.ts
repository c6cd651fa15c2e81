// Typed calls to the gateway: openapi-fetch over the paths generated from /v1/openapi.json
// (v1.d.ts) and from the console's own /console/api/openapi.json (console.d.ts), with the
// console's cookie and its CSRF token on every state change.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths as V1Paths } from './v1';
import type { paths as ConsolePaths } from './console';

export type paths = V1Paths & ConsolePaths;

let csrfToken = '';
export const setCsrfToken = (token: string): void => {
  csrfToken = token;
};

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrf);

/** The SPEC error body. */
export interface ApiErrorBody {
  error: { type: string; code: string; message: string; param?: string; request_id?: string; retry_after?: number };
}

/** A failed call, as the pages show it. */
export class CallError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | null,
  ) {
    super(body?.error.message ?? `HTTP ${status}`);
  }
  get code(): string | undefined {
    return this.body?.error.code;
  }
  get param(): string | undefined {
    return this.body?.error.param;
  }
  /** The route does not exist on this gateway (a feature that has not landed or is turned off). */
  get notAvailable(): boolean {
    return this.status === 404 && (this.code === 'route_not_found' || this.body === null);
  }
}

/** Unwraps an openapi-fetch result: the data, or a CallError. */
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) throw new CallError(response.status, (error as ApiErrorBody) ?? null);
  return data as T;
}

/**
 * Routes the generated document does not list yet (features landing in parallel: webhook
 * endpoints, analyses). Same cookie and CSRF; the pages show "not available" on a 404 route.
 */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) throw new CallError(res.status, parsed as ApiErrorBody | null);
  return parsed as T;
}
