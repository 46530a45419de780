/*
 * Ed25519 keys as JWKs (RFC 8037), their thumbprints (RFC 7638), and signing and verifying with
 * WebCrypto (globalThis.crypto.subtle: Node 20, Deno, Bun, browsers and edge workers have it).
 */

import { sha256 } from '@noble/hashes/sha2';
import { base64urlDecode, base64urlEncode, utf8Encode } from './base64url';

export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** base64url of the 32-byte public key. */
  x: string;
}

export interface Ed25519PrivateJwk extends Ed25519PublicJwk {
  /** base64url of the 32-byte private seed. */
  d: string;
}

const ED25519 = { name: 'Ed25519' } as const;

/** WebCrypto's key type, as the runtime's typings name it (DOM's CryptoKey, Node's webcrypto.CryptoKey). */
export type WebCryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

/** The public key of a JWK that is exactly an Ed25519 key (other members ignored); null otherwise. */
export function readEd25519PublicJwk(value: unknown): Ed25519PublicJwk | null {
  if (typeof value !== 'object' || value === null) return null;
  const { kty, crv, x } = value as Record<string, unknown>;
  if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string' || base64urlDecode(x)?.length !== 32) return null;
  return { kty, crv, x };
}

/** An Ed25519 private JWK (with its public x); null for anything else. */
export function readEd25519PrivateJwk(value: unknown): Ed25519PrivateJwk | null {
  const pub = readEd25519PublicJwk(value);
  const d = (value as { d?: unknown } | null)?.d;
  if (!pub || typeof d !== 'string' || base64urlDecode(d)?.length !== 32) return null;
  return { ...pub, d };
}

/** RFC 7638 (RFC 8037 A.3 for OKP): base64url SHA-256 of {"crv","kty","x"} in that order, no spaces. */
export function jwkThumbprint(jwk: Ed25519PublicJwk): string {
  return base64urlEncode(sha256(utf8Encode(`{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`)));
}

export function importEd25519PublicKey(jwk: Ed25519PublicJwk): Promise<WebCryptoKey> {
  return crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, ED25519, false, ['verify']);
}

export function importEd25519PrivateKey(jwk: Ed25519PrivateJwk): Promise<WebCryptoKey> {
  return crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d }, ED25519, false, ['sign']);
}

/** A new key pair as a private JWK (keep it secret; its public part is `{kty, crv, x}`). */
export async function generateEd25519Jwk(): Promise<Ed25519PrivateJwk> {
  const pair = (await crypto.subtle.generateKey(ED25519, true, ['sign', 'verify'])) as { privateKey: WebCryptoKey };
  const jwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
  const key = readEd25519PrivateJwk(jwk);
  if (!key) throw new Error('the runtime exported an Ed25519 key that is not one');
  return key;
}

export async function signEd25519(key: WebCryptoKey, message: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign(ED25519, key, new Uint8Array(utf8Encode(message))));
}

/** False for a wrong signature, and for one that is not 64 bytes. */
export async function verifyEd25519(key: WebCryptoKey, message: string, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== 64) return false;
  return crypto.subtle.verify(ED25519, key, new Uint8Array(signature), new Uint8Array(utf8Encode(message)));
}
