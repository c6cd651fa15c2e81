// The web console's server side: cookie sign-in, the account-level routes /v1 does not have
// (users, API keys, the operator view) and the built single-page app under /console/.
// Everything organization data goes through the /v1 handlers with the cookie standing in for a key;
// the console's own routes (/console/api/*) have their own OpenAPI document, not /v1's.
import type { FastifyInstance } from 'fastify';
import consoleAuthRoutes from './auth-routes.js';
import consoleKeyRoutes from './key-routes.js';
import operatorRoutes from './operator-routes.js';
import consoleLiveRoutes from './live-routes.js';
import consoleWebhookRoutes from './webhook-routes.js';
import consoleTelephonyRoutes from './telephony-routes.js';
import consoleSessionRoutes from './session-routes.js';
import consoleUsageRoutes from './usage-routes.js';
import consoleStatic from './static.js';
import type { ConsoleDeps } from './context.js';

export { SignInStore } from './sign-in-store.js';
export { ConsoleCookieAuthenticator, COOKIE_NAME } from './cookie-auth.js';
export { createConsoleUser, setPasswordLink, EmailTakenError, ORG_ROLES, type ConsoleRole } from './users.js';
export type { ConsoleDeps } from './context.js';

export async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  await app.register(consoleAuthRoutes, deps);
  await app.register(consoleKeyRoutes, deps);
  await app.register(operatorRoutes, deps);
  await app.register(consoleLiveRoutes, deps);
  await app.register(consoleWebhookRoutes, deps);
  await app.register(consoleTelephonyRoutes, deps);
  await app.register(consoleSessionRoutes, deps);
  await app.register(consoleUsageRoutes, deps);
  await app.register(consoleStatic);
}
