import { hmacSha256 } from '@crawlgate/core';
import { createHmac } from 'node:crypto';
import { nodeHmacSha256 } from './node-hmac';
import { runtimeHmacSha256 } from './runtime-hmac';

const expected = (secret: string, message: string) =>
  new Uint8Array(createHmac('sha256', secret).update(message).digest());
const cases: [string, string][] = [
  ['secret', 'message'],
  ['cgsec_' + 'k'.repeat(43), 'eyJ4IjoxfQ'],
  ['sécret ✓', 'crawlgate gate v1\npayload'],
  ['k'.repeat(200), ''],
];

describe('the HMAC the middleware checks tokens with', () => {
  it('is node:crypto’s on Node (process.getBuiltinModule), byte for byte HMAC-SHA256', () => {
    const hmac = runtimeHmacSha256();
    expect(hmac).not.toBe(hmacSha256);
    for (const [secret, message] of cases) {
      expect(new Uint8Array(hmac(secret, message))).toEqual(expected(secret, message));
      expect(new Uint8Array(nodeHmacSha256(secret, message))).toEqual(expected(secret, message));
    }
  });

  it('is core’s pure-JS HMAC on a runtime without getBuiltinModule, or one refusing node:crypto', () => {
    const original = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    try {
      for (const stand of [
        undefined,
        () => undefined,
        () => {
          throw new Error('no node:crypto here');
        },
      ]) {
        Object.defineProperty(process, 'getBuiltinModule', { value: stand, configurable: true, writable: true });
        expect(runtimeHmacSha256()).toBe(hmacSha256);
      }
    } finally {
      if (original) Object.defineProperty(process, 'getBuiltinModule', original);
    }
    expect(runtimeHmacSha256()).not.toBe(hmacSha256);
    for (const [secret, message] of cases) expect(hmacSha256(secret, message)).toEqual(expected(secret, message));
  });
});
