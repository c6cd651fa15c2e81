// The web console in a real browser: a gateway on a port chosen free at run time (stream URLs name
// it, so publicUrl must be exact), console users, and Debian's chromium driven by playwright-core.
import { createServer } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createConsoleUser, type ConsoleRole } from '../../src/console/index.js';
import { DEFAULT_SCOPES } from '../../src/api/context.js';
import { startGateway, type Gateway } from '../../src/server.js';
import { createEngines } from '../../src/speech/index.js';
import { createApiKey, createOrg } from '../../src/store/index.js';
import { dropTestState, testConfig, uniqueName } from './gateway.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const PASSWORD = 'correct horse battery staple';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface ConsoleGateway {
  gw: Gateway;
  base: string;
  /** An organization with generous limits and a full-scope API key. */
  createOrg(credits?: number): Promise<{ orgId: string; key: string; keyId: string }>;
  addUser(orgId: string | null, email: string, role: ConsoleRole): Promise<{ id: string; email: string }>;
  stop(): Promise<void>;
}

/** The gateway with the console; `embeddedEngines` adds the media role with the offline speech engines. */
export async function startConsoleGateway(opts: { embeddedEngines?: boolean; overrides?: Record<string, unknown> } = {}): Promise<ConsoleGateway> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = testConfig({
    httpPort: port,
    publicUrl: base,
    ...(opts.embeddedEngines ? { roles: ['api', 'media', 'worker'], sip: { enabled: false } } : {}),
    ...opts.overrides,
  });
  const engines = opts.embeddedEngines ? await createEngines(config.engines) : undefined;
  const gw = await startGateway(config, { engines });
  return {
    gw,
    base,
    async createOrg(credits = 1000) {
      const org = await createOrg(gw.db, {
        name: uniqueName('org'),
        credits,
        maxConcurrentSessions: 100,
        rateLimit: 100_000,
        rateWindowSeconds: 60,
        features: ['ai_agent', 'sip', 'recording'],
      });
      const key = await createApiKey(gw.db, { orgId: org.id, environment: config.apiEnvironment, scopes: [...DEFAULT_SCOPES] });
      return { orgId: org.id, key: key.key!, keyId: key.id };
    },
    async addUser(orgId, email, role) {
      const { user } = await createConsoleUser(gw.db, { orgId, email, role, password: PASSWORD });
      return { id: user.id, email: user.email };
    },
    async stop() {
      await gw.close();
      await engines?.close();
      await dropTestState(config);
    },
  };
}

export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: the tests run as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--autoplay-policy=no-user-gesture-required', ...extraArgs],
  });
}

/** Signs in through the form and waits for the signed-in header. */
export async function signIn(page: Page, base: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor({ timeout: 30_000 });
}
