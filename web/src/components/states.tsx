// Loading, error, empty and "not available" states, shared by every page.
import type { ComponentChildren } from 'preact';
import { useEffect, useState, useCallback } from 'preact/hooks';
import { CallError } from '../api/client';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (error instanceof CallError && error.notAvailable) {
    return (
      <p class="state notice" role="status">
        Not available on this gateway (the route answered 404).
      </p>
    );
  }
  const msg = error instanceof Error ? error.message : String(error);
  const code = error instanceof CallError ? error.code : undefined;
  return (
    <p class="state error" role="alert">
      {msg}
      {code ? <code> ({code})</code> : null}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Loads once (and on reload()), tracking loading and error. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const reload = useCallback(() => {
    setLoading(true);
    load().then(
      (d) => {
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e) => {
        setError(e);
        setLoading(false);
      },
    );
  }, deps);
  useEffect(reload, [reload]);
  return { data, error, loading, reload };
}

export function Loaded<T>({
  state,
  what,
  children,
}: {
  state: { data?: T; error?: unknown; loading: boolean };
  what: string;
  children: (d: T) => ComponentChildren;
}) {
  if (state.loading && state.data === undefined) return <Loading what={what} />;
  if (state.error !== undefined) return <ErrorBox error={state.error} />;
  return <>{children(state.data as T)}</>;
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');
