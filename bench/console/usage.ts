// The console overview's usage statement (GET /console/api/usage) over a populated schema: its
// time and plan for one organization among many, for 14 and 90 days (printed, never asserted;
// BENCHMARKS.md "Console usage overview"). Rows are generated in SQL: ORGS organizations with
// SESSIONS sessions each over the last 120 days, an analysis and a credit for every 5th session, a
// failed recording for every 200th.
// Usage: nice -n 10 npx tsx bench/console/usage.ts [orgs=50] [sessionsPerOrg=4000]
import { createOrg, createPool, migrate } from '../../src/store/index.js';
import { orgUsage, windowStart } from '../../src/console/usage-routes.js';
import { usageQuery, ERROR_END_REASONS } from '../../src/store/index.js';
import { dropTestState, testConfig } from '../../test/helpers/gateway.js';
import { defined } from '../defined.js';

const ORGS = Number(process.argv[2] ?? 50);
const PER_ORG = Number(process.argv[3] ?? 4000);
const config = testConfig();
await migrate(config.databaseUrl, config.databaseSchema);
// One connection: the id helper below is a pg_temp function of that session.
const db = createPool(config.databaseUrl, config.databaseSchema, undefined, 1);

try {
  const orgIds: string[] = [];
  for (let i = 0; i < ORGS; i++) {
    const org = await createOrg(db, { name: `bench ${i}`, credits: 1000, maxConcurrentSessions: 10, rateLimit: 100, rateWindowSeconds: 60, features: [] });
    orgIds.push(org.id);
  }
  const t0 = performance.now();
  // Ids as the gateway makes them: prefix + 10 base32 chars of the creation time in ms + random.
  await db.query(`
    CREATE FUNCTION pg_temp.b32time(ms bigint) RETURNS text LANGUAGE sql AS $$
      SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', ((ms >> (5 * (9 - i))) & 31)::int + 1, 1), '' ORDER BY i)
        FROM generate_series(0, 9) i $$`);
  await db.query(
    `INSERT INTO sessions (id, org_id, status, mode, audio, voice, recording, created_at, started_at, ended_at, duration_seconds, end_reason)
     SELECT 'sess_' || pg_temp.b32time((extract(epoch FROM at) * 1000)::bigint) || md5(o || '-' || n)::varchar(16), o, 'ended', 'ai_agent', '{}', '{}', '{}',
            at, at, at + interval '3 minutes', 180, CASE WHEN n % 50 = 0 THEN $3 ELSE 'api_request' END
       FROM (SELECT o, n, now() - random() * interval '120 days' AS at FROM unnest($1::text[]) o, generate_series(1, $2::int) n) g`,
    [orgIds, PER_ORG, ERROR_END_REASONS[0]],
  );
  await db.query(
    `INSERT INTO analyses (id, session_id, org_id, include, status, created_at)
     SELECT 'anl_' || substr(id, 6), id, org_id, '{summary}', CASE WHEN random() < 0.05 THEN 'failed' ELSE 'completed' END, created_at
       FROM sessions WHERE substr(md5(id), 1, 1) IN ('0', '1', '2')`,
  );
  await db.query(`INSERT INTO credit_ledger (org_id, delta, reason, created_at) SELECT org_id, -1, 'analysis', created_at FROM analyses`);
  await db.query(
    `INSERT INTO recordings (id, session_id, org_id, channel, status, error, created_at)
     SELECT 'rec_' || substr(id, 6), id, org_id, 'mixed', 'failed', 'bench', created_at FROM sessions WHERE substr(md5(id), 1, 2) = '00'`,
  );
  await db.query('ANALYZE');
  const counts = (await db.query(`SELECT (SELECT count(*) FROM sessions) s, (SELECT count(*) FROM analyses) a, (SELECT count(*) FROM credit_ledger) c`))
    .rows[0];
  console.log(
    `populated ${ORGS} orgs: ${counts.s} sessions, ${counts.a} analyses, ${counts.c} ledger rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const org = defined(orgIds[Math.floor(ORGS / 2)], 'org');
  for (const days of [14, 90]) {
    await orgUsage(db, org, days); // warm the cache
    const runs = 20;
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const s = performance.now();
      await orgUsage(db, org, days);
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    const u = await orgUsage(db, org, days);
    console.log(
      `days=${days}: p50 ${defined(times[Math.floor(runs / 2)], 'p50').toFixed(1)} ms, max ${defined(times[runs - 1], 'max').toFixed(1)} ms over ${runs} runs; ` +
        `${u?.series.reduce((n, d) => n + d.sessions, 0)} sessions, ${u?.errors.length} errors in the answer`,
    );
  }
  // The plan of the statement, to see that each table is read through its index.
  const q = usageQuery(org, windowStart(14));
  const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${q.text}`, q.values);
  console.log(
    plan.rows
      .map((r) => r['QUERY PLAN'])
      .filter((l) => /Scan/.test(l))
      .map((l) => l.trim())
      .join('\n'),
  );
} finally {
  await db.end();
  await dropTestState(config);
}
