import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../context.js';

/** Registers every /v1 resource route family. */
export async function resourceRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  void app;
  void deps;
}
