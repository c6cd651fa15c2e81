import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context.js';

/** /healthz: the process is up. /readyz: PostgreSQL and Redis answer (what a load balancer should gate on). */
export default async function healthRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const check = async (fn: () => Promise<unknown>): Promise<string> => {
      try {
        await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2000).unref())]);
        return 'ok';
      } catch (err) {
        return `error: ${(err as Error).message}`;
      }
    };
    const [postgres, redis] = await Promise.all([check(() => deps.db.query('SELECT 1')), check(() => deps.redis.ping())]);
    const ready = postgres === 'ok' && redis === 'ok';
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', checks: { postgres, redis } };
  });
}
