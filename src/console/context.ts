import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import type { Db } from '../store/index.js';
import type { SignInStore } from './sign-in-store.js';

/** What the console's route plugins receive. */
export interface ConsoleDeps {
  config: Config;
  db: Db;
  /** Shared Redis: the operator view reads the nodes' heartbeat records there. */
  redis: Redis;
  store: SignInStore;
}

export const secureCookies = (config: Config): boolean => config.console.secureCookies ?? config.publicUrl.startsWith('https://');
