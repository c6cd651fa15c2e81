// Who is signed in (GET /console/api/auth/me), shared by the pages.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export interface Me {
  user: { id: string; email: string; role: 'owner' | 'developer' | 'viewer' | 'operator'; org_id: string | null };
  organization: { id: string; name: string; status: string; credits: number; credits_used: number; features: string[] } | null;
  csrf_token: string;
}

export const MeContext = createContext<{ me: Me; signOut: (everywhere: boolean) => void } | null>(null);

export function useMe() {
  const ctx = useContext(MeContext);
  if (!ctx) throw new Error('useMe outside a signed-in page');
  return ctx;
}

export const canWrite = (me: Me): boolean => me.user.role === 'owner' || me.user.role === 'developer';
