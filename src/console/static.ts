// Serves the built web console (web/ → dist/web) under /console/, with the single-page app's
// index.html for every client-side route. Without a build, /console/ says how to make one.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { packageRoot } from '../config/index.js';
import { ApiError } from '../api/index.js';

export const WEB_DIST = path.join(packageRoot, 'dist/web');

export default async function consoleStatic(app: FastifyInstance): Promise<void> {
  app.get('/console', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'));
  // Unknown console API paths are API 404s, never the single-page app's HTML.
  app.all('/console/api/*', { schema: { hide: true } }, async () => {
    throw new ApiError('route_not_found');
  });
  if (!existsSync(path.join(WEB_DIST, 'index.html'))) {
    app.get('/console/*', { schema: { hide: true } }, async (_req, reply) =>
      reply.code(503).type('text/plain').send('The web console is not built: run `npm run build`.'),
    );
    return;
  }
  await app.register(fastifyStatic, { root: WEB_DIST, prefix: '/console/', wildcard: false, index: ['index.html'], cacheControl: true, maxAge: '1h' });
  app.get('/console/*', { schema: { hide: true } }, async (_req, reply) => reply.header('cache-control', 'no-cache').sendFile('index.html'));
}
