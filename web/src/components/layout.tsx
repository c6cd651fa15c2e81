import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useMe } from '../session';

const ORG_NAV = [
  ['/console/', 'Overview'],
  ['/console/sessions', 'Sessions'],
  ['/console/live', 'Live'],
  ['/console/try', 'Try it'],
  ['/console/agents', 'Agents'],
  ['/console/keys', 'API keys'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/users', 'Users'],
] as const;
const OWNER_NAV = [...ORG_NAV, ['/console/numbers', 'Numbers']] as const;
const OPERATOR_NAV = [
  ['/console/', 'Nodes'],
  ['/console/operator/calls', 'Live calls'],
  ['/console/operator/sip', 'SIP ladder'],
  ['/console/operator/organizations', 'Organizations'],
] as const;

export function Layout({ children }: { children: ComponentChildren }) {
  const { me, signOut } = useMe();
  const { path } = useLocation();
  const nav = me.user.role === 'operator' ? OPERATOR_NAV : me.user.role === 'owner' ? OWNER_NAV : ORG_NAV;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">voxbridge</strong>
        <span class="who">
          {me.organization?.name ?? 'operator'} · {me.user.email} ({me.user.role})
        </span>
        <button type="button" onClick={() => signOut(false)}>
          Sign out
        </button>
        <button type="button" class="secondary" onClick={() => signOut(true)}>
          Sign out everywhere
        </button>
      </header>
      <nav aria-label="Console">
        <ul>
          {nav.map(([href, label]) => (
            <li key={href}>
              <a href={href} aria-current={path === href ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
