// Cookie sign-in for the web console: sign in (throttled, with lockout), who am I, sign out,
// sign out everywhere, set a password from a one-time link, and an owner inviting a user.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { ApiError } from '../api/index.js';
import { getOrgSummary } from '../store/index.js';
import { clearSignInCookie, requireSignIn, setSignInCookie } from './cookie-auth.js';
import { secureCookies, type ConsoleDeps } from './context.js';
import { createConsoleUser, EmailTakenError, listOrgUsers, ORG_ROLES, setPasswordLink, setPasswordWithToken, verifyConsoleUser } from './users.js';

const SignInBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const SetPasswordBody = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 200 }), password: Type.String({ minLength: 10, maxLength: 1024 }) },
  { additionalProperties: false },
);
const InviteBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    role: Type.Union(ORG_ROLES.map((r) => Type.Literal(r))),
  },
  { additionalProperties: false },
);

const tags = ['console'];
/** One client address may fail this many times the per-account budget (offices share an address). */
const IP_FAILURE_FACTOR = 10;

export default async function consoleAuthRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { store, db, config } = deps;
  const secure = secureCookies(config);

  app.post<{ Body: Static<typeof SignInBody> }>('/console/api/auth/sign_in', { schema: { tags, body: SignInBody } }, async (req, reply) => {
    const email = req.body.email.trim().toLowerCase();
    // Both the account and the client address are throttled: one stops guessing one password,
    // the other stops trying one password on many accounts.
    const who = [`email:${email}`, `ip:${req.ip}`];
    for (const [i, w] of who.entries()) {
      const wait = await store.lockedFor(w, i === 0 ? 1 : IP_FAILURE_FACTOR);
      if (wait > 0) throw new ApiError('sign_in_locked', { retryAfter: wait, headers: { 'Retry-After': String(wait) } });
    }
    const user = await verifyConsoleUser(db, email, req.body.password);
    if (!user) {
      await Promise.all(who.map((w) => store.recordFailure(w)));
      throw new ApiError('sign_in_failed');
    }
    await store.clearFailures(`email:${email}`);
    const { cookie, signIn } = await store.create({ userId: user.id, orgId: user.org_id, role: user.role, email: user.email });
    setSignInCookie(reply, cookie, { secure, maxAgeSeconds: config.console.sessionTtlSeconds });
    return { user, csrf_token: signIn.csrf };
  });

  app.get('/console/api/auth/me', { schema: { tags } }, async (req) => {
    const { signIn } = await requireSignIn(store, req);
    const org = signIn.orgId ? await getOrgSummary(db, signIn.orgId) : null;
    return { user: { id: signIn.userId, email: signIn.email, role: signIn.role, org_id: signIn.orgId }, organization: org, csrf_token: signIn.csrf };
  });

  app.post('/console/api/auth/sign_out', { schema: { tags } }, async (req, reply) => {
    const { cookie } = await requireSignIn(store, req);
    await store.end(cookie);
    clearSignInCookie(reply, secure);
    return { signed_out: 1 };
  });

  app.post('/console/api/auth/sign_out_everywhere', { schema: { tags } }, async (req, reply) => {
    const { signIn } = await requireSignIn(store, req);
    const count = await store.endAll(signIn.userId);
    clearSignInCookie(reply, secure);
    return { signed_out: count };
  });

  app.post<{ Body: Static<typeof SetPasswordBody> }>('/console/api/auth/set_password', { schema: { tags, body: SetPasswordBody } }, async (req) => {
    const user = await setPasswordWithToken(db, req.body.token, req.body.password);
    if (!user) throw new ApiError('set_password_token_invalid');
    return { user };
  });

  app.get('/console/api/users', { schema: { tags } }, async (req) => {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId) throw new ApiError('insufficient_permissions');
    return { object: 'list', data: await listOrgUsers(db, signIn.orgId) };
  });

  app.post<{ Body: Static<typeof InviteBody> }>('/console/api/users', { schema: { tags, body: InviteBody } }, async (req, reply) => {
    const { signIn } = await requireSignIn(store, req);
    if (!signIn.orgId || signIn.role !== 'owner') throw new ApiError('insufficient_permissions', { message: 'Only an owner may invite users.' });
    try {
      const created = await createConsoleUser(db, { orgId: signIn.orgId, email: req.body.email, role: req.body.role });
      reply.code(201);
      return { user: created.user, set_password_url: setPasswordLink(config.publicUrl, created.setPasswordToken!) };
    } catch (err) {
      if (err instanceof EmailTakenError) throw new ApiError('email_taken');
      throw err;
    }
  });
}
