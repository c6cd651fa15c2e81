import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context.js';
import { ErrorBody } from '../schemas/common.js';
import sessionRoutes from './sessions.js';
import recordingRoutes from './recordings.js';
import agentRoutes from './agents.js';
import webhookEndpointRoutes from './webhook-endpoints.js';
import analysisRoutes from './analyses.js';

/** Registers every /v1 resource route family (dial/hangup come from the telephony plane's calls.ts). */
export async function resourceRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  if (!app.getSchema('ErrorBody')) app.addSchema(ErrorBody);
  // Bodyless POSTs (…/end) are often sent with Content-Type: application/json and nothing after it;
  // an empty JSON body means "no body" here. Anything else goes through Fastify's own parser
  // (prototype-poisoning protection included).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return defaultJson(req, text, done);
  });
  // /v1 bodies are JSON only: without this, Fastify's built-in text/plain parser hands the schema a
  // string and the client is told "body must be object" instead of what is wrong (the content type).
  app.removeContentTypeParser('text/plain');
  await app.register(sessionRoutes, deps);
  await app.register(recordingRoutes, deps);
  await app.register(agentRoutes, deps);
  await app.register(webhookEndpointRoutes, deps);
  await app.register(analysisRoutes, deps);
}
