import pg from 'pg';
import type { Logger } from 'pino';

export type Db = pg.Pool;
export type DbClient = pg.PoolClient | pg.Pool;

// Named statements: the hot ones (a call's lookups and rows, session create/retrieve/activation/end,
// the webhook worker's) are sent as `{ name, text, values }`, so each connection parses and plans
// them once and then only binds (PostgreSQL CPU per call setup −28 %, BENCHMARKS.md eighth pass).
// They list their columns, never `*`: a prepared `SELECT *` fails with "cached plan must not change
// result type" on every use once a migration adds a column under a running node
// (test/integration/named-statement-columns.test.ts keeps the lists whole).

// int8 (bigint) columns are credit counts well inside Number's safe range.
pg.types.setTypeParser(20, (v) => Number(v));

export function createPool(url: string, schema: string, logger?: Logger, max = 20): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // pg's default closes a connection after 10 s idle: the connections a burst of call set-ups opened
    // then close together, and in the media bench that coincided with an 80–180 ms event-loop stall
    // in 6 of 7 runs (none in 3 runs with 60 s). A minute keeps the pool warm between set-up waves.
    idleTimeoutMillis: 60_000,
    // Every connection works inside the configured schema (tests get one schema each).
    options: `-c search_path=${schema}`,
  });
  pool.on('error', (err) => logger?.error({ err }, 'postgres pool error'));
  return pool;
}

/** Runs `fn` in one transaction; commits on success, rolls back and rethrows on failure. */
export async function withTransaction<T>(db: Db, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
