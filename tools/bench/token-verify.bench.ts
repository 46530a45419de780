import { hmacSha256, signAccessToken, verifyAccessToken } from '@crawlgate/core';
import { createSigner, createVerifier } from 'fast-jwt';
import { jwtVerify, SignJWT } from 'jose';
import { createHmac } from 'node:crypto';
import { measure, measureSync } from './measure';
import { pairedGoals, type BenchResult } from './goals';
import { alternate, pairedTable, PAIRS, ROUND_SECONDS, type PairedRow } from './paired';

/**
 * Local access-token verification, as middleware does on every paid request: ours (HMAC-SHA256,
 * plus site and path checks) against HS256 JWT verification of the same claims by fast-jwt
 * (node:crypto) and jose (WebCrypto, async). Ours is one code on every runtime: core's pure-JS
 * HMAC, so the edge runtimes' path is the Node one. Beside them, that HMAC alone against
 * node:crypto's createHmac on the token's signed segment. A function benchmark, so it runs in this
 * process, but in alternating rounds like the server benchmarks.
 */
export async function tokenVerifyBench(): Promise<BenchResult> {
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
  const options = { secret, siteId: claims.site_id, path: '/premium/report' };
  if (!verifyAccessToken(ours, options).valid) throw new Error('bench token does not verify');
  const segment = ours.slice(0, ours.indexOf('.'));

  const fastJwtToken = createSigner({ key: secret, algorithm: 'HS256' })(claims);
  const fastJwtVerify = createVerifier({ key: secret, algorithms: ['HS256'], cache: false });
  const key = new TextEncoder().encode(secret);
  const joseToken = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(key);

  const durationMs = ROUND_SECONDS * 1000;
  const oursRound = () => measureSync('ours', () => verifyAccessToken(ours, options), { durationMs }).opsPerSecond;
  const fastJwtRound = () => measureSync('fast-jwt', () => fastJwtVerify(fastJwtToken), { durationMs }).opsPerSecond;
  const fastJwt = await alternate(async () => ({ baseline: fastJwtRound(), ours: oursRound() }));
  const jose = await alternate(async () => ({
    baseline: (await measure('jose', () => jwtVerify(joseToken, key), { durationMs, batch: 200 })).opsPerSecond,
    ours: oursRound(),
  }));
  const hmac = await alternate(async () => ({
    baseline: measureSync('node:crypto', () => createHmac('sha256', secret).update(segment).digest(), { durationMs })
      .opsPerSecond,
    ours: measureSync('core', () => hmacSha256(secret, segment), { durationMs }).opsPerSecond,
  }));
  const rows: PairedRow[] = [
    {
      figure: 'crawlgate verifyAccessToken (every runtime: Node and edge run the same pure-JS HMAC)',
      baselineName: 'fast-jwt HS256 verify',
      paired: fastJwt,
      goal: 2,
    },
    {
      figure: 'crawlgate verifyAccessToken',
      baselineName: 'jose jwtVerify HS256',
      paired: jose,
    },
    {
      figure: `core's hmacSha256 of the token's signed segment (${segment.length} characters)`,
      baselineName: "node:crypto createHmac('sha256')",
      paired: hmac,
    },
  ];
  const report = [
    pairedTable('Local token verification (in-process function benchmark)', 'ops/s', rows),
    '',
    `${PAIRS} pairs of ${ROUND_SECONDS} s rounds per row, baseline then ours, after a warm-up; one thread, unpinned.`,
  ].join('\n');
  return { report, goals: pairedGoals(rows) };
}
