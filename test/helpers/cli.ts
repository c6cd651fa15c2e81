// Runs the real compiled `voxbridge` command (dist/, built by `npm run build`) against a test
// configuration's isolated database schema and Redis prefix.
import { spawn } from 'node:child_process';
import { packageRoot, type Config } from '../../src/config/index.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON when it is JSON. */
  json?: any;
}

export interface CliOptions {
  env?: Record<string, string>;
  stdin?: string;
}

export function runCli(config: Config, args: string[], o: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/voxbridge.js', ...args], {
      cwd: packageRoot,
      env: {
        ...process.env,
        DATABASE_URL: config.databaseUrl,
        DATABASE_SCHEMA: config.databaseSchema,
        REDIS_URL: config.redisUrl,
        REDIS_KEY_PREFIX: config.redisKeyPrefix,
        LOG_LEVEL: 'silent',
        ...o.env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(o.stdin ?? '');
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? 1, stdout, stderr, json });
    });
  });
}
