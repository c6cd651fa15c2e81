import { useState } from 'preact/hooks';
import { api, CallError, unwrap, setCsrfToken } from '../api/client';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const res = await unwrap(api.POST('/console/api/auth/sign_in', { body: { email: String(form.get('email')), password: String(form.get('password')) } }));
      setCsrfToken((res as unknown as { csrf_token: string }).csrf_token);
      onSignedIn();
    } catch (err) {
      if (err instanceof CallError && err.code === 'sign_in_locked') {
        setError(`Too many failed sign-ins. Try again in ${Math.ceil((err.body?.error.retry_after ?? 60) / 60)} min.`);
      } else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="narrow" id="main">
      <h1>Sign in to voxbridge</h1>
      <form onSubmit={submit} aria-describedby={error ? 'sign-in-error' : undefined}>
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
        {error ? (
          <p id="sign-in-error" class="state error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
