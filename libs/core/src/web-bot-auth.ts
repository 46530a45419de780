/*
 * Web Bot Auth (draft-meunier-web-bot-auth-architecture, now draft-ietf-webbotauth-httpsig-protocol;
 * keys per draft-meunier-http-message-signatures-directory): an agent signs each request with
 * RFC 9421 HTTP Message Signatures, `tag="web-bot-auth"`, naming the origin that serves its key
 * directory in Signature-Agent. This is the signing side and the names both sides share; the
 * middleware verifies (libs/middleware/src/web-bot-auth/).
 */

import { base64Encode } from './base64url';
import {
  importEd25519PrivateKey,
  jwkThumbprint,
  readEd25519PrivateJwk,
  readEd25519PublicJwk,
  signEd25519,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
} from './ed25519-jwk';
import { signatureBase, type SignedRequestView } from './http-message-signature';
import { randomBytes } from './keys';
import { serializeSfInnerList, serializeSfItem, sf, type SfInnerList, type SfItem } from './structured-fields';

export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
export const KEY_DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
export const KEY_DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
/** Cloudflare's rule: a signed request's price header must be signed too. */
export const CRAWLER_PRICE_HEADERS = ['crawler-max-price', 'crawler-exact-price'] as const;
/** The signature the draft recommends at most (24 h); signers here default to one minute. */
export const MAX_WEB_BOT_AUTH_LIFETIME_SECONDS = 86_400;

export interface WebBotAuthSignerOptions {
  /** The agent's Ed25519 private key as a JWK (generateEd25519Jwk() makes one). */
  key: Ed25519PrivateJwk;
  /** The https origin serving the key directory at /.well-known/http-message-signatures-directory. */
  signatureAgent: string;
  /** How long each signature is valid: 1 to 86 400 s, default 60. */
  lifetimeSeconds?: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
  /** Tests only: a Signature-Agent of http://127.0.0.1:… (a key directory served on loopback). */
  allowLoopbackAgent?: boolean;
}

export interface SignableRequest {
  method: string;
  url: string | URL;
  /** The headers the request will carry: a price header among them is covered by the signature. */
  headers: Headers;
}

export interface WebBotAuthSigner {
  /** The key's JWK thumbprint, sent as keyid. */
  readonly keyid: string;
  readonly signatureAgent: string;
  /** Signature-Agent, Signature-Input and Signature for this request (fresh created, expires, nonce). */
  sign(request: SignableRequest): Promise<Record<'signature-agent' | 'signature-input' | 'signature', string>>;
}

const LABEL = 'sig1';

export function createWebBotAuthSigner(options: WebBotAuthSignerOptions): WebBotAuthSigner {
  const key = readEd25519PrivateJwk(options.key);
  if (!key) throw new TypeError('webBotAuth.key must be an Ed25519 private JWK ({kty: "OKP", crv: "Ed25519", x, d})');
  const agent = signatureAgentOrigin(options.signatureAgent, options.allowLoopbackAgent === true);
  if (!agent)
    throw new TypeError(
      `webBotAuth.signatureAgent must be an https origin such as "https://agent.example", got ${JSON.stringify(options.signatureAgent)}`,
    );
  const lifetime = options.lifetimeSeconds ?? 60;
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > MAX_WEB_BOT_AUTH_LIFETIME_SECONDS) {
    throw new RangeError(
      `webBotAuth.lifetimeSeconds: a whole number from 1 to ${MAX_WEB_BOT_AUTH_LIFETIME_SECONDS}, got ${lifetime}`,
    );
  }
  const now = options.now ?? Date.now;
  const keyid = jwkThumbprint(key);
  const privateKey = importEd25519PrivateKey(key);
  privateKey.catch(() => undefined); // reported by sign()
  const agentHeader = `${LABEL}=${serializeSfItem(sf.string(agent))}`;

  return {
    keyid,
    signatureAgent: agent,
    async sign({ method, url, headers }) {
      const target = new URL(url);
      const covered: SfItem[] = [
        sf.string('@authority'),
        sf.string('@method'),
        sf.string('@path'),
        sf.string('signature-agent', new Map([['key', sf.text(LABEL)]])),
      ];
      for (const name of CRAWLER_PRICE_HEADERS) if (headers.has(name)) covered.push(sf.string(name));
      const created = Math.floor(now() / 1000);
      const params: SfInnerList = {
        kind: 'inner-list',
        items: covered,
        params: new Map([
          ['created', sf.integer(created)],
          ['expires', sf.integer(created + lifetime)],
          ['keyid', sf.text(keyid)],
          ['nonce', sf.text(base64Encode(randomBytes(32)))],
          ['tag', sf.text(WEB_BOT_AUTH_TAG)],
        ]),
      };
      const signed = new Headers(headers);
      signed.set('signature-agent', agentHeader);
      const view: SignedRequestView = {
        method,
        authority: target.host,
        path: target.pathname,
        query: target.search,
        header: (name) => signed.get(name) ?? undefined,
      };
      const base = signatureBase(view, params);
      if (base === null) throw new Error('web bot auth: the request has no value for a covered component');
      const signature = await signEd25519(await privateKey, base);
      return {
        'signature-agent': agentHeader,
        'signature-input': `${LABEL}=${serializeSfInnerList(params)}`,
        signature: `${LABEL}=:${base64Encode(signature)}:`,
      };
    },
  };
}

export interface KeyDirectoryEntry extends Ed25519PublicJwk {
  kid: string;
  use: 'sig';
}

/** The key directory (a JWKS) an agent serves at KEY_DIRECTORY_PATH: public keys only, kid = thumbprint. */
export function webBotAuthKeyDirectory(keys: readonly Ed25519PublicJwk[]): { keys: KeyDirectoryEntry[] } {
  return {
    keys: keys.map((key) => {
      const pub = readEd25519PublicJwk(key);
      if (!pub) throw new TypeError('webBotAuthKeyDirectory: every key must be an Ed25519 JWK');
      return { ...pub, kid: jwkThumbprint(pub), use: 'sig' as const };
    }),
  };
}

/**
 * The origin a Signature-Agent directory member names: an https origin, optionally with "/";
 * no path, query, fragment or credentials. `allowLoopbackHttp` also admits http://127.0.0.1,
 * http://[::1] and http://localhost (tests). Null for anything else.
 */
export function signatureAgentOrigin(value: string, allowLoopbackHttp = false): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const https = url.protocol === 'https:';
  const loopbackHttp = allowLoopbackHttp && url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (!https && !loopbackHttp) return null;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    return null;
  // The text must be the origin itself, not something the URL parser repaired into one.
  if (value !== url.origin && value !== `${url.origin}/`) return null;
  return url.origin;
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
