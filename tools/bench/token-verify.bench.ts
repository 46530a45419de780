import { signAccessToken, verifyAccessToken } from '@crawlgate/core';
import { createSigner, createVerifier } from 'fast-jwt';
import { jwtVerify, SignJWT } from 'jose';
import { measure, measureSync } from './measure';
import { alternate, pairedTable, PAIRS, ROUND_SECONDS } from './paired';

/**
 * Local access-token verification, as middleware does on every paid request: ours (HMAC-SHA256 in
 * pure JS via @noble/hashes, plus site and path checks) against HS256 JWT verification of the same
 * claims by fast-jwt (node:crypto) and jose (WebCrypto, async). A function benchmark, so it runs
 * in this process, but in alternating rounds like the server benchmarks.
 */
export async function tokenVerifyBench(): Promise<string> {
  const secret = 'cgsec_' + 'k'.repeat(43);
  const now = Math.floor(Date.now() / 1000);
  const claims = { gate_id: '6f1c1a4e-8d7b-4e57-9f3a-1f2b3c4d5e6f', site_id: '0b8e8f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', url: '/premium/report', kid: 'k1', iat: now, exp: now + 1800 };

  const ours = signAccessToken(claims, secret);
  const options = { secret, siteId: claims.site_id, url: '/premium/report' };
  if (!verifyAccessToken(ours, options).valid) throw new Error('bench token does not verify');

  const fastJwtToken = createSigner({ key: secret, algorithm: 'HS256' })(claims);
  const fastJwtVerify = createVerifier({ key: secret, algorithms: ['HS256'], cache: false });
  const key = new TextEncoder().encode(secret);
  const joseToken = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(key);

  const durationMs = ROUND_SECONDS * 1000;
  const oursRound = () => measureSync('ours', () => verifyAccessToken(ours, options), { durationMs }).opsPerSecond;
  const fastJwt = await alternate(async () => ({ baseline: measureSync('fast-jwt', () => fastJwtVerify(fastJwtToken), { durationMs }).opsPerSecond, ours: oursRound() }));
  const jose = await alternate(async () => ({ baseline: (await measure('jose', () => jwtVerify(joseToken, key), { durationMs, batch: 200 })).opsPerSecond, ours: oursRound() }));
  return [
    pairedTable('Local token verification (in-process function benchmark)', 'ops/s', [
      { figure: 'crawlgate verifyAccessToken', baselineName: 'fast-jwt HS256 verify', paired: fastJwt },
      { figure: 'crawlgate verifyAccessToken', baselineName: 'jose jwtVerify HS256', paired: jose },
    ]),
    '',
    `${PAIRS} pairs of ${ROUND_SECONDS} s rounds per row, baseline then ours, after a warm-up; one thread, unpinned.`,
  ].join('\n');
}
