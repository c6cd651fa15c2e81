// Public door of secrets/: encryption at rest and named secrets (engine and LLM API keys).
import type pg from 'pg';
import { getSecret } from './store.js';

export { encryptSecret, decryptSecret } from './crypto.js';
export { setSecret, listSecrets, deleteSecret, getSecret, SECRET_NAME, type SecretInfo } from './store.js';

/** Looks up a secret by organization (null: node-wide) and name; null when unset. */
export type SecretResolver = (orgId: string | null, name: string) => Promise<string | null>;

/**
 * The resolver engines and agents use: an organization's own secret first, then the node-wide one
 * of the same name. Read per call (keys rotate without a restart); values are never logged.
 */
export function secretResolver(db: Pick<pg.Pool, 'query'>, secretKey: string): SecretResolver {
  return async (orgId, name) => (orgId ? await getSecret(db, secretKey, orgId, name) : null) ?? getSecret(db, secretKey, null, name);
}
