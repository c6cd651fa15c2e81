// The gates after the API key (SPEC.md "Gate failures"): organization active (403), scope (403),
// credits where the route is gated (402). Registered after the rate limiter and idempotency, so
// a refused authenticated request still carries X-RateLimit-* and counts toward the limit, and a
// replay is answered from its stored response before the credit gate can refuse it.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';

async function gatesPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (req) => {
    const scope = req.routeOptions.config?.scope;
    const auth = req.auth;
    if (!scope || !auth) return;
    if (auth.org.status !== 'active') throw new ApiError('organization_inactive');
    if (!auth.scopes.includes(scope)) {
      throw new ApiError('insufficient_permissions', { message: `The API key lacks the '${scope}' scope required by this endpoint.` });
    }
  });
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.config?.creditGated && req.auth && req.auth.org.credits <= 0) {
      throw new ApiError('insufficient_api_credits');
    }
  });
}

export default fp(gatesPlugin, { name: 'voxbridge-gates', dependencies: ['voxbridge-rate-limit', 'voxbridge-idempotency'] });
