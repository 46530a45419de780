import { hmacSha256, signAccessToken, verifyAccessToken, type HmacSha256 } from '@crawlgate/core';
import { createSigner, createVerifier } from 'fast-jwt';
import { jwtVerify, SignJWT } from 'jose';
import { nodeHmacSha256 } from '../../libs/middleware/src/node-hmac';
import { measure, measureSync } from './measure';
import { alternate, pairedTable, PAIRS, ROUND_SECONDS } from './paired';

/**
 * Local access-token verification, as middleware does on every paid request: ours (HMAC-SHA256,
 * plus site and path checks) against HS256 JWT verification of the same claims by fast-jwt
 * (node:crypto) and jose (WebCrypto, async). Ours twice: with node:crypto's HMAC, as the Node
 * adapters use it, and with the pure-JS one (@noble/hashes) edge runtimes get. A function
 * benchmark, so it runs in this process, but in alternating rounds like the server benchmarks.
 */
export async function tokenVerifyBench(): Promise<string> {
  const secret = 'cgsec_' + 'k'.repeat(43);
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    gate_id: '6f1c1a4e-8d7b-4e57-9f3a-1f2b3c4d5e6f',
    site_id: '0b8e8f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    url: '/premium/report',
    kid: 'k1',
    iat: now,
    exp: now + 1800,
  };

  const ours = signAccessToken(claims, secret);
  // The middleware passes the path it priced (requestPath() done once), as here.
  const optionsWith = (hmac: HmacSha256) => ({ secret, siteId: claims.site_id, path: '/premium/report', hmac });
  const native = optionsWith(nodeHmacSha256);
  const pureJs = optionsWith(hmacSha256);
  for (const options of [native, pureJs])
    if (!verifyAccessToken(ours, options).valid) throw new Error('bench token does not verify');

  const fastJwtToken = createSigner({ key: secret, algorithm: 'HS256' })(claims);
  const fastJwtVerify = createVerifier({ key: secret, algorithms: ['HS256'], cache: false });
  const key = new TextEncoder().encode(secret);
  const joseToken = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(key);

  const durationMs = ROUND_SECONDS * 1000;
  const oursRound = (options: typeof native) =>
    measureSync('ours', () => verifyAccessToken(ours, options), { durationMs }).opsPerSecond;
  const fastJwtRound = () => measureSync('fast-jwt', () => fastJwtVerify(fastJwtToken), { durationMs }).opsPerSecond;
  const fastJwt = await alternate(async () => ({ baseline: fastJwtRound(), ours: oursRound(native) }));
  const fastJwtPureJs = await alternate(async () => ({ baseline: fastJwtRound(), ours: oursRound(pureJs) }));
  const jose = await alternate(async () => ({
    baseline: (await measure('jose', () => jwtVerify(joseToken, key), { durationMs, batch: 200 })).opsPerSecond,
    ours: oursRound(native),
  }));
  return [
    pairedTable('Local token verification (in-process function benchmark)', 'ops/s', [
      {
        figure: 'crawlgate verifyAccessToken, node:crypto HMAC (Node adapters)',
        baselineName: 'fast-jwt HS256 verify',
        paired: fastJwt,
        goal: 2,
      },
      {
        figure: 'crawlgate verifyAccessToken, pure-JS HMAC (edge runtimes)',
        baselineName: 'fast-jwt HS256 verify',
        paired: fastJwtPureJs,
      },
      {
        figure: 'crawlgate verifyAccessToken, node:crypto HMAC (Node adapters)',
        baselineName: 'jose jwtVerify HS256',
        paired: jose,
      },
    ]),
    '',
    `${PAIRS} pairs of ${ROUND_SECONDS} s rounds per row, baseline then ours, after a warm-up; one thread, unpinned.`,
  ].join('\n');
}
