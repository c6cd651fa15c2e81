// The operator view's gate: a signed-in operator (gateway-wide role), CSRF-checked on changes.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../api/index.js';
import { requireSignIn } from './cookie-auth.js';
import type { SignInStore } from './sign-in-store.js';

export async function requireOperator(store: SignInStore, req: FastifyRequest): Promise<void> {
  const { signIn } = await requireSignIn(store, req);
  if (signIn.role !== 'operator') throw new ApiError('operator_only');
}
