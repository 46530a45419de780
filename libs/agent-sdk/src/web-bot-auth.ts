/*
 * Web Bot Auth for agents: sign every request with an Ed25519 key, so sites can tell this agent
 * from anyone using its User-Agent, and publish the key directory that lets them check.
 *
 *   const key = await generateWebBotAuthKey();            // keep it secret, keep it stable
 *   createAgent({ ..., webBotAuth: { key, signatureAgent: 'https://agent.example' } });
 *   // serve at https://agent.example/.well-known/http-message-signatures-directory:
 *   webBotAuthDirectoryResponse(key)   // or JSON.stringify(webBotAuthDirectory(key))
 */

import {
  createWebBotAuthSigner,
  generateEd25519Jwk,
  KEY_DIRECTORY_MEDIA_TYPE,
  KEY_DIRECTORY_PATH,
  readEd25519PublicJwk,
  webBotAuthKeyDirectory,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
  type KeyDirectoryEntry,
} from '@crawlgate/core';
import { isPlainHttpOffLoopback } from './redirects';

export type { Ed25519PrivateJwk, Ed25519PublicJwk, KeyDirectoryEntry };

export interface WebBotAuthOptions {
  /** The agent's Ed25519 private key as a JWK (generateWebBotAuthKey()). */
  key: Ed25519PrivateJwk;
  /** The https origin that serves the key directory, sent as Signature-Agent. */
  signatureAgent: string;
  /** How long each signature is valid; default 60 s. */
  lifetimeSeconds?: number;
  /** Tests only: a Signature-Agent of http://127.0.0.1:… */
  allowLoopbackAgent?: boolean;
}

/** Where the directory is served, under the Signature-Agent origin. */
export const WEB_BOT_AUTH_DIRECTORY_PATH = KEY_DIRECTORY_PATH;

/** A new Ed25519 key pair as a private JWK. */
export function generateWebBotAuthKey(): Promise<Ed25519PrivateJwk> {
  return generateEd25519Jwk();
}

/** The key directory (JWKS) for these keys: public parts only, kid = JWK thumbprint. List the old and the new key while rotating. */
export function webBotAuthDirectory(keys: Ed25519PublicJwk | readonly Ed25519PublicJwk[]): {
  keys: KeyDirectoryEntry[];
} {
  const list = Array.isArray(keys) ? keys : [keys as Ed25519PublicJwk];
  return webBotAuthKeyDirectory(list.map((key) => readEd25519PublicJwk(key) ?? key));
}

/** The directory as an HTTP answer, for any fetch-style server (Hono, Workers, Next.js, Deno, Bun). */
export function webBotAuthDirectoryResponse(
  keys: Ed25519PublicJwk | readonly Ed25519PublicJwk[],
  maxAgeSeconds = 3600,
): Response {
  return new Response(JSON.stringify(webBotAuthDirectory(keys)), {
    headers: { 'content-type': KEY_DIRECTORY_MEDIA_TYPE, 'cache-control': `public, max-age=${maxAgeSeconds}` },
  });
}

/** Signs one request the agent sends: the signature headers for this method, URL and headers. */
export type HopSigner = (request: { method: string; url: URL; headers: Headers }) => Promise<Record<string, string>>;

/**
 * Signs each hop the agent sends (redirects.ts), but one over plain http off loopback unless
 * `overPlainHttp`: a signature covers neither the scheme nor the query, so whoever sees it on the
 * way could stop the request and present it, within its lifetime, to the https site as this agent.
 */
export function webBotAuthHopSigner(options: WebBotAuthOptions, overPlainHttp = false): HopSigner {
  const signer = createWebBotAuthSigner(options);
  return async ({ method, url, headers }) =>
    !overPlainHttp && isPlainHttpOffLoopback(url) ? {} : signer.sign({ method, url, headers });
}
