/*
 * The publisher's API key lives in sessionStorage only: it goes when the tab closes, is never
 * put in a URL, and is sent to the API alone, in the Authorization header.
 */
const KEY = 'crawlgate.api_key';

export interface KeyStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function readApiKey(store: KeyStore): string | null {
  return store.getItem(KEY);
}

export function saveApiKey(store: KeyStore, apiKey: string): void {
  store.setItem(KEY, apiKey);
}

export function forgetApiKey(store: KeyStore): void {
  store.removeItem(KEY);
}
