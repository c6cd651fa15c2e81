export { createPool, withTransaction, type Db, type DbClient } from './db.js';
export { migrate, MIGRATIONS_DIR } from './migrate.js';
export { insertEvent, type WebhookEventType } from './outbox.js';
export * from './orgs.js';
export * from './sessions-repo.js';
export * from './agents-repo.js';
export * from './recordings-repo.js';
export * from './transcripts-repo.js';
export * from './page.js';
