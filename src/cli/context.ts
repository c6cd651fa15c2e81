import { loadConfig, type Config } from '../config/index.js';
import { createPool, migrate, type Db } from '../store/index.js';

/** What a CLI command needs, created lazily so `--help` works without a database. */
export class CliContext {
  private cfg?: Config;
  private pool?: Db;

  config(): Config {
    return (this.cfg ??= loadConfig());
  }

  /** A pool on a migrated schema: admin commands work on a fresh database too. */
  async db(): Promise<Db> {
    if (!this.pool) {
      const cfg = this.config();
      await migrate(cfg.databaseUrl, cfg.databaseSchema);
      this.pool = createPool(cfg.databaseUrl, cfg.databaseSchema, undefined, 2);
    }
    return this.pool;
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}

/** Admin commands print exactly one JSON object on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A usage or input problem the operator must fix; printed on stderr, exit 2. */
export class CliUsageError extends Error {}

export function parseIntOption(name: string) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new CliUsageError(`${name} must be a non-negative integer, got '${raw}'`);
    return Number(raw);
  };
}

/** Limits (rate, window, concurrency) of 0 would refuse everything or divide by zero: they must be at least 1. */
export function parsePositiveIntOption(name: string) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new CliUsageError(`${name} must be a positive integer, got '${raw}'`);
    return Number(raw);
  };
}

export const parseList = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
