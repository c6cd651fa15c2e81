// One Fastify app serves /v1 and the console's own routes, so @fastify/swagger builds one document;
// each audience gets its part: /v1/openapi.json documents only /v1 (the SPEC contract) and the
// console's /console/api/openapi.json only /console/api (cookie-authenticated).
import type { FastifyInstance } from 'fastify';

type Doc = { paths?: Record<string, unknown> } & Record<string, unknown>;

export function openApiSubset(app: FastifyInstance, prefix: string, overrides: Record<string, unknown> = {}): Doc {
  const full = app.swagger() as unknown as Doc;
  const paths = Object.fromEntries(Object.entries(full.paths ?? {}).filter(([p]) => p.startsWith(prefix)));
  return { ...full, ...overrides, paths };
}
