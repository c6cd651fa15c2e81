// The console's cookie: reading it, checking CSRF on state changes, and turning a signed-in
// organization user into the AuthContext the /v1 handlers already understand (same gates, same
// 404 rule across organizations, no second copy of the business rules).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../api/index.js';
import { DEFAULT_SCOPES, type AuthContext, type CookieAuthenticator, type Scope } from '../api/index.js';
import { getOrg, type Db } from '../store/index.js';
import type { SignIn, SignInStore } from './sign-in-store.js';
import type { ConsoleRole } from './users.js';

export const COOKIE_NAME = 'vb_console';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const READ_SCOPES: Scope[] = ['sessions:read', 'recordings:read', 'analysis:read', 'agents:read'];

/** What each organization role may do through /v1: viewers read, developers and owners also write. */
export function scopesOf(role: ConsoleRole): Scope[] {
  if (role === 'viewer') return READ_SCOPES;
  if (role === 'owner' || role === 'developer') return DEFAULT_SCOPES;
  return [];
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function cookieOf(req: FastifyRequest): string | undefined {
  const value = req.cookies?.[COOKIE_NAME];
  return value ? value : undefined;
}

export function setSignInCookie(reply: FastifyReply, value: string, opts: { secure: boolean; maxAgeSeconds: number }): void {
  reply.setCookie(COOKIE_NAME, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: opts.secure, maxAge: opts.maxAgeSeconds });
}

export function clearSignInCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(COOKIE_NAME, { path: '/', httpOnly: true, sameSite: 'lax', secure });
}

/** The sign-in of this request (CSRF-checked when the method changes state); throws sign_in_required. */
export async function requireSignIn(store: SignInStore, req: FastifyRequest): Promise<{ cookie: string; signIn: SignIn }> {
  const cookie = cookieOf(req);
  const signIn = cookie ? await store.get(cookie) : null;
  if (!cookie || !signIn) throw new ApiError('sign_in_required');
  checkCsrf(req, signIn);
  return { cookie, signIn };
}

export function checkCsrf(req: FastifyRequest, signIn: SignIn): void {
  if (SAFE_METHODS.has(req.method)) return;
  const sent = req.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !sameToken(sent, signIn.csrf)) throw new ApiError('csrf_token_invalid');
}

export class ConsoleCookieAuthenticator implements CookieAuthenticator {
  constructor(
    private readonly db: Db,
    private readonly store: SignInStore,
  ) {}

  async authenticate(req: FastifyRequest): Promise<AuthContext | null> {
    const cookie = cookieOf(req);
    if (!cookie) return null;
    const signIn = await this.store.get(cookie);
    // An expired cookie is reported like a missing key: the console sends the browser to sign in.
    if (!signIn) throw new ApiError('sign_in_required');
    checkCsrf(req, signIn);
    if (!signIn.orgId) throw new ApiError('insufficient_permissions', { message: 'Operators see organizations through the operator view, not /v1.' });
    const row = await getOrg(this.db, signIn.orgId);
    if (!row) throw new ApiError('sign_in_required');
    const { created_at: _c, updated_at: _u, ...org } = row;
    // keyId names the user: rate-limit windows are per user, sessions record who created them.
    return { keyId: signIn.userId, orgId: signIn.orgId, scopes: scopesOf(signIn.role), org: org };
  }
}
