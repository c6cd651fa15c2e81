// The composition root: one process serves the roles it is given (api, media, worker), sharing
// PostgreSQL and Redis with the other nodes (DESIGN.md "Scale-out").
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import { createLogger } from './logger.js';
import { createPool, migrate, type Db } from './store/index.js';
import { createRedis } from './coord/redis.js';
import { buildApp } from './api/app.js';

export interface Gateway {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  app: FastifyInstance;
  /** The HTTP address actually bound (port 0 in tests picks a free one). */
  httpUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Apply migrations before serving (the default for `voxbridge serve`). */
  migrate?: boolean;
  logger?: Logger;
}

export async function startGateway(config: Config, opts: StartOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config);
  if (opts.migrate !== false) await migrate(config.databaseUrl, config.databaseSchema, (m) => logger.debug(m));
  const db = createPool(config.databaseUrl, config.databaseSchema, logger);
  const redis = createRedis(config.redisUrl, config.redisKeyPrefix, logger);
  const deps = { config, logger, db, redis };

  const app = await buildApp(deps);
  const address = await app.listen({ host: config.httpHost, port: config.httpPort });
  const httpUrl = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  logger.info({ httpUrl, roles: config.roles }, 'voxbridge listening');

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      await app.close();
      await db.end();
      redis.disconnect();
    })());

  return { config, logger, db, redis, app, httpUrl, close };
}
