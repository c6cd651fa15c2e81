// Public door of api/: the Fastify app for /v1, the calls routes the telephony role adds, the
// metrics registry, and the API-key scopes (the CLI creates keys with them).
export { buildApp, type BuildOptions, type ExtraRoutes } from './app.js';
export { default as callRoutes, callCommandExecutor, type CallForwarder, type CallRoutesOptions } from './routes/calls.js';
export { metricsRegistry } from './plugins/metrics.js';
export { DEFAULT_SCOPES, type ApiDeps, type AuthContext, type CookieAuthenticator, type OrgRow, type Scope } from './context.js';
export { ApiError, ERROR_CATALOG, type ErrorCode } from './errors.js';
export { openApiSubset } from './openapi-subset.js';
export { sessionListPage, sessionListSchema, type SessionListQueryT } from './routes/session-list.js';
