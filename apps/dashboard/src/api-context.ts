import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { PublisherClient } from '@crawlgate/publisher';

export interface Session {
  client: PublisherClient;
  /** A key rotation hands the dashboard the new key; the old one no longer works. */
  replaceApiKey(apiKey: string): void;
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession() outside a signed-in page');
  return session;
}
