// GET /console/api/sessions/{id}/events: a session's events pushed to the browser as Server-Sent
// Events (transcript.segment, session.started, session.ended, …), authenticated by the console
// cookie and scoped to the user's organization (another organization's session is 404, like /v1).
// The stream first says `ready` once it is listening; the page then loads the transcript, so no
// segment falls between the two. A comment every 15 s keeps proxies from closing it, and re-checks
// the sign-in (signing out everywhere ends the stream).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ApiError } from '../api/index.js';
import { sessionExistsInOrg } from '../store/index.js';
import { cookieOf, requireSignIn } from './cookie-auth.js';
import type { ConsoleDeps } from './context.js';
import { SessionFeed, type FeedEvent } from './live-feed.js';

const HEARTBEAT_MS = 15_000;

export default async function consoleLiveRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, store, config } = deps;
  const feed = new SessionFeed({ db, databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema, logger: app.log });
  const open = new Set<ServerResponse>();
  // Open streams would hold the server's close; end them first.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
    await feed.close();
  });

  app.get<{ Params: { id: string } }>(
    '/console/api/sessions/:id/events',
    { schema: { tags: ['console'], hide: true } },
    async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const { signIn } = await requireSignIn(store, req);
      if (!signIn.orgId) throw new ApiError('insufficient_permissions', { message: 'Operators see organizations through the operator view.' });
      const orgId = signIn.orgId;
      const id = req.params.id;
      const found = /^[0-9A-Za-z_-]{1,64}$/.test(id) && (await sessionExistsInOrg(db, id, orgId));
      if (!found) throw new ApiError('session_not_found', { param: 'session_id', message: `No session '${id}' in this organization.` });

      const res = reply.raw;
      reply.hijack();
      let unsubscribe = () => {};
      const timer: { heartbeat?: NodeJS.Timeout } = {};
      // Attached before anything awaits, so a browser that leaves early still releases its subscription.
      res.on('close', () => {
        clearInterval(timer.heartbeat);
        unsubscribe();
        open.delete(res);
      });
      const send = (e: FeedEvent) => {
        const data = e.type === 'resync' ? {} : { id: e.id, type: e.type, created_at: e.created_at.toISOString(), data: e.data };
        res.write(`${e.id ? `id: ${e.id}\n` : ''}event: ${e.type}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      try {
        const stop = await feed.subscribe(orgId, id, send);
        if (res.destroyed) return stop();
        unsubscribe = stop;
      } catch (err) {
        req.log.warn({ err }, 'console live feed unavailable');
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { type: 'api_error', code: 'service_unavailable', message: 'The live feed is unavailable.' } }));
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 2000\n\nevent: ready\ndata: {}\n\n');
      open.add(res);
      const cookie = cookieOf(req);
      timer.heartbeat = setInterval(() => {
        void (cookie ? store.get(cookie) : Promise.resolve(null)).then(
          (still) => (still ? res.write(': ping\n\n') : res.end()),
          () => res.write(': ping\n\n'),
        );
      }, HEARTBEAT_MS);
    },
  );
}
