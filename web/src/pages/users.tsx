import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { useMe } from '../session';
import { Loaded, Empty, ErrorBox, useLoad, when } from '../components/states';

interface User {
  id: string;
  email: string;
  role: string;
  has_password: boolean;
  created_at: string;
}

export function Users() {
  const { me } = useMe();
  const list = useLoad(async () => (await unwrap(api.GET('/console/api/users'))) as unknown as { data: User[] });
  const [link, setLink] = useState<string>();
  const [error, setError] = useState<unknown>();

  const invite = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    try {
      const res = (await unwrap(
        api.POST('/console/api/users', { body: { email: String(form.get('email')), role: form.get('role') as 'developer' } }),
      )) as unknown as { set_password_url: string };
      setLink(res.set_password_url);
      setError(undefined);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>Users</h1>
      {me.user.role === 'owner' ? (
        <form class="card" onSubmit={invite} aria-labelledby="invite">
          <h2 id="invite">Invite a user</h2>
          <label for="inv-email">Email</label>
          <input id="inv-email" name="email" type="email" required />
          <label for="inv-role">Role</label>
          <select id="inv-role" name="role">
            <option>developer</option>
            <option>viewer</option>
            <option>owner</option>
          </select>
          <button type="submit">Invite</button>
        </form>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
      {link ? (
        <div class="card shown-once" role="status">
          <p>Send this one-time link to the new user (valid 7 days):</p>
          <code>{link}</code>
        </div>
      ) : null}
      <Loaded state={list} what="users">
        {(d) =>
          d.data.length === 0 ? (
            <Empty>No users.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Password</th>
                  <th scope="col">Added</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((u) => (
                  <tr key={u.id}>
                    <td>{u.email}</td>
                    <td>{u.role}</td>
                    <td>{u.has_password ? 'set' : 'invited'}</td>
                    <td>{when(u.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}
