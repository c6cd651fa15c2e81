import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context.js';
import { ErrorBody } from '../schemas/common.js';
import sessionRoutes from './sessions.js';
import recordingRoutes from './recordings.js';
import agentRoutes from './agents.js';

/** Registers every /v1 resource route family (dial/hangup come from the telephony plane's calls.ts). */
export async function resourceRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(sessionRoutes, deps);
  await app.register(recordingRoutes, deps);
  await app.register(agentRoutes, deps);
}
