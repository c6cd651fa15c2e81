// Builds the Fastify app for /v1: plugins in gate order (errors, request id, metrics, auth, rate
// limit, idempotency, organization/scope/credit gates), then the resource routes. The OpenAPI document is generated from the route schemas.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { newId } from '../ids.js';
import type { ApiDeps } from './context.js';
import errorsPlugin, { frameworkErrorHandler } from './plugins/errors.js';
import metricsPlugin from './plugins/metrics.js';
import authPlugin from './plugins/auth.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import idempotencyPlugin from './plugins/idempotency.js';
import gatesPlugin from './plugins/gates.js';
import healthRoutes from './routes/health.js';
import { resourceRoutes } from './routes/index.js';
import { openApiSubset } from './openapi-subset.js';
import { ErrorBody } from './schemas/common.js';

export interface ExtraRoutes {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- plugins with different option types share this list
  plugin: FastifyPluginAsync<any>;
  opts: Record<string, unknown>;
}

function makeAjv(coerce: boolean): Ajv {
  // Bodies are strict (a string is never silently a number); query strings and params are coerced.
  const ajv = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: coerce ? 'array' : false, strict: false });
  addFormats.default(ajv);
  return ajv;
}

export interface BuildOptions {
  /** Serve the /v1 resource routes (the api role); health, metrics and OpenAPI are always served. */
  resources?: boolean;
}

export async function buildApp(deps: ApiDeps, extra: ExtraRoutes[] = [], opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- without it Fastify infers pino's Logger and the app type no longer matches FastifyInstance
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: () => newId('req'),
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      // Per-request lines only when debugging; errors are logged by the error handler.
      disableRequestLogging: deps.config.logLevel !== 'debug' && deps.config.logLevel !== 'trace',
    }),
    bodyLimit: deps.config.limits.bodyLimitBytes,
    // Ids up to this length reach the route (its schema answers an over-long id with the resource's
    // 404); longer path segments are refused by the router, also as that 404 (frameworkErrorHandler).
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: frameworkErrorHandler,
    return503OnClosing: true,
    forceCloseConnections: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema));

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-ID', req.id);
  });

  await app.register(errorsPlugin);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'voxbridge Real-Time Voice Session Service', version: 'v1' },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'sk_live_… or sk_test_… API key' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
  });
  // The SPEC error body, shared by reference: by /v1 and by the console's own routes (src/console/).
  app.addSchema(ErrorBody);
  await app.register(metricsPlugin);
  // Parsed before auth: a console sign-in cookie may stand in for an API key (src/console/).
  await app.register(cookie);
  await app.register(authPlugin, deps);
  await app.register(rateLimitPlugin, deps);
  await app.register(idempotencyPlugin, deps);
  await app.register(gatesPlugin);
  await app.register(healthRoutes, deps);
  if (opts.resources !== false) {
    await app.register(resourceRoutes, deps);
    for (const extraRoutes of extra) await app.register(extraRoutes.plugin, extraRoutes.opts);
  }

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => openApiSubset(app, '/v1/'));
  await app.ready();
  return app;
}
