import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';

/** The one-time link from `voxbridge admin user add` or an owner's invitation: /console/set-password#token=… */
export function SetPassword() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  const [state, setState] = useState<'form' | 'done'>('form');
  const [error, setError] = useState<string>();

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const password = String(form.get('password'));
    if (password !== String(form.get('confirm'))) return setError('The two passwords differ.');
    try {
      await unwrap(api.POST('/console/api/auth/set_password', { body: { token, password } }));
      setState('done');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  if (state === 'done')
    return (
      <main class="narrow" id="main">
        <h1>Password set</h1>
        <p>
          <a href="/console/">Sign in</a>
        </p>
      </main>
    );
  return (
    <main class="narrow" id="main">
      <h1>Choose your password</h1>
      <form onSubmit={submit}>
        <label for="password">New password (10 characters or more)</label>
        <input id="password" name="password" type="password" minLength={10} autoComplete="new-password" required />
        <label for="confirm">Repeat it</label>
        <input id="confirm" name="confirm" type="password" minLength={10} autoComplete="new-password" required />
        {error ? (
          <p class="state error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={!token}>
          Set password
        </button>
      </form>
    </main>
  );
}
