// GET /console/api/sessions: the signed-in user's organization's sessions, filtered and cursor-paged
// (SPEC has no list-sessions endpoint, so this is a console route, not /v1). The rules live in the
// api plane (sessionListPage); here only the cookie sign-in and the organization scope.
// GET /console/api/openapi.json documents the console's routes for its typed client.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, openApiSubset, sessionListPage, sessionListSchema, type SessionListQueryT } from '../api/index.js';
import { COOKIE_NAME, requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';

export default async function consoleSessionRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db } = deps;
  const orgOf = new WeakMap<FastifyRequest, string>();

  app.get(
    '/console/api/sessions',
    {
      schema: sessionListSchema,
      // Signed in before the query is validated, so a stranger learns nothing from a 400 (as on /v1).
      onRequest: async (req) => {
        const { signIn } = await requireSignIn(store, req);
        if (!signIn.orgId) throw new ApiError('insufficient_permissions', { message: 'Operators see organizations through the operator view.' });
        orgOf.set(req, signIn.orgId);
      },
    },
    async (req) => sessionListPage(db, orgOf.get(req) as string, req.query as SessionListQueryT),
  );

  app.get('/console/api/openapi.json', { schema: { hide: true } }, async () =>
    openApiSubset(app, '/console/api/', {
      info: { title: 'voxbridge console API', version: 'console' },
      components: {
        ...((app.swagger() as { components?: Record<string, unknown> }).components ?? {}),
        securitySchemes: { cookie: { type: 'apiKey', in: 'cookie', name: COOKIE_NAME, description: 'Console sign-in; state changes also need X-CSRF-Token.' } },
      },
      security: [{ cookie: [] }],
    }),
  );
}
