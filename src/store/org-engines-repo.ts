// An organization's own speech engines (migration 012). The speech plane validates a choice and
// builds engines from it; this file only stores it. A stage left null uses the node's engine.
import type pg from 'pg';

type Queryable = Pick<pg.Pool, 'query'>;

/** One stage's engine: a provider of speech/ and the settings that provider reads. */
export interface OrgEngineStage {
  provider: string;
  url?: string;
  model?: string;
  /** TTS: the default voice. */
  voice?: string;
  /** Name of a secret (the organization's, else the node-wide one) holding the API key. */
  apiKeySecret?: string;
  /** Languages offered to planning (providers that cannot list theirs). */
  languages?: string[];
}

export type OrgEngineStageName = 'stt' | 'translate' | 'tts';

export type OrgEngineChoice = Record<OrgEngineStageName, OrgEngineStage | null>;

/** Per stage: a stage to set, null to go back to the node's engine, absent to leave as is. */
export type OrgEngineChanges = Partial<Record<OrgEngineStageName, OrgEngineStage | null>>;

export async function getOrgEngines(db: Queryable, orgId: string): Promise<OrgEngineChoice | null> {
  const { rows } = await db.query<OrgEngineChoice>('SELECT stt, translate, tts FROM org_engines WHERE org_id = $1', [orgId]);
  const row = rows[0];
  return row && (row.stt || row.translate || row.tts) ? { stt: row.stt, translate: row.translate, tts: row.tts } : null;
}

/** Applies the changes and returns the organization's choice after them (all null: the node's engines). */
export async function setOrgEngines(db: Queryable, orgId: string, changes: OrgEngineChanges): Promise<OrgEngineChoice> {
  const value = (s: OrgEngineStageName): string | null | undefined => (changes[s] === undefined ? undefined : changes[s] && JSON.stringify(changes[s]));
  const { rows } = await db.query<OrgEngineChoice>(
    `INSERT INTO org_engines (org_id, stt, translate, tts) VALUES ($1, $2::jsonb, $4::jsonb, $6::jsonb)
     ON CONFLICT (org_id) DO UPDATE SET
       stt = CASE WHEN $3 THEN EXCLUDED.stt ELSE org_engines.stt END,
       translate = CASE WHEN $5 THEN EXCLUDED.translate ELSE org_engines.translate END,
       tts = CASE WHEN $7 THEN EXCLUDED.tts ELSE org_engines.tts END,
       updated_at = now()
     RETURNING stt, translate, tts`,
    [
      orgId,
      value('stt') ?? null,
      changes.stt !== undefined,
      value('translate') ?? null,
      changes.translate !== undefined,
      value('tts') ?? null,
      changes.tts !== undefined,
    ],
  );
  const [row] = rows;
  if (!row) throw new Error('org_engines upsert returned no row'); // INSERT … ON CONFLICT DO UPDATE always returns it
  return { stt: row.stt, translate: row.translate, tts: row.tts };
}
