import { createHash } from 'node:crypto';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { packageRoot } from '../config/index.js';

export const MIGRATIONS_DIR = path.join(packageRoot, 'src/store/migrations');

/** One advisory lock per schema: nodes migrating the same schema queue, other schemas (tests) run in parallel. */
function lockValueFor(schema: string): number {
  return createHash('sha256').update(`voxbridge-migrate:${schema}`).digest().readInt32BE(0);
}

/** Applies pending migrations inside `schema` (created when missing). Safe to run concurrently: a second caller waits for the first. */
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
    lockValue: lockValueFor(schema),
    advisoryLockMode: 'wait',
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
