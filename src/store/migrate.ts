import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { packageRoot } from '../config/index.js';

export const MIGRATIONS_DIR = path.join(packageRoot, 'src/store/migrations');

/** Applies pending migrations inside `schema` (created when missing). Safe to run concurrently: node-pg-migrate takes an advisory lock. */
export async function migrate(databaseUrl: string, schema: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    schema,
    createSchema: true,
    migrationsSchema: schema,
    checkOrder: true,
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
