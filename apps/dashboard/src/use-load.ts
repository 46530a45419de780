import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '@crawlgate/publisher';
import { useSession } from './api-context';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/**
 * Loads once per change of `deps`; an answer for stale deps is dropped, a 401 signs out. A failed
 * reload keeps the data it had, so a page (and whatever it shows once, like new credentials) stays.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const { signOut } = useSession();
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let current = true;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => {
        if (!current) return;
        if (error instanceof ApiError && error.status === 401) signOut();
        setState((previous) => ({ data: previous.data, error, loading: false }));
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
