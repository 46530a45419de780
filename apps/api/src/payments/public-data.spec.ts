import { exactPaymentV1, signGate, USDC_ABI, type TransferAuthorization } from '@crawlgate/core';
import { decodeFunctionData, type Hash } from 'viem';
import { middlewareGate, openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, historyHeaders, newWallet, signPayment } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * Nobody but the payer may obtain its access token from public data: the wallet-addressed views
 * (anyone can send X-Wallet-Address; the history also needs the wallet's proof, but is read by the
 * payer's tools and may leak), the chain's calldata and logs. A token needs the gate's id,
 * a signed offer only its visitor was shown; public views name the gate by its ref alone.
 */
describe('a payer’s token from public data', () => {
  let app: TestApp;
  let site: TestSite;
  let publisher: Awaited<ReturnType<typeof pricedSite>>['publisher'];
  const payTo = newWallet().address;
  const victim = newWallet();

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ site, publisher } = await pricedSite(app, payTo));
    await fundUsdc(app, victim.address, '1');
  });
  afterAll(() => app.close());

  it('cannot be had with the history’s gate and hash, nor with the authorization read back from calldata', async () => {
    const gate = await openGate(app, site, '/public/report');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, victim, gate) },
    });
    expect(paid.status).toBe(200);

    // A stranger sees nothing by the victim's public address; the history the victim reads (which
    // could leak) must not be a way to its token either.
    const unproven = await app.call('GET', '/v1/agents/me/payments', {
      headers: { 'x-wallet-address': victim.address },
    });
    expect(unproven.status).toBe(401);
    const history = await app.call('GET', '/v1/agents/me/payments', { headers: await historyHeaders(app, victim) });
    const [item] = history.body.items;
    expect(item).toMatchObject({ gate_id: gate.ref, tx_hash: paid.body.tx_hash });
    expect(JSON.stringify(history.body)).not.toContain(gate.id);

    // The settled authorization, rebuilt from the transaction's calldata.
    const { replayed, to } = await authorizationFromCalldata(item.tx_hash as Hash);

    // At the gate the history names: not a gate at all.
    for (const body of [{ tx_hash: item.tx_hash }, { payment: replayed }]) {
      const answer = await app.call('POST', `/v1/gates/${item.gate_id}/verify`, { body });
      expect({ status: answer.status, token: answer.body.access_token }).toEqual({ status: 404, token: undefined });
    }
    // At a fresh gate of the same path, as the site offers any visitor: the proof paid another gate.
    const fresh = await openGate(app, site, '/public/report');
    for (const body of [{ tx_hash: item.tx_hash }, { payment: replayed }]) {
      const answer = await app.call('POST', `/v1/gates/${fresh.id}/verify`, { body });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.body.access_token).toBeUndefined();
    }
    // At a gate forged with the history's terms (any MAC: the stranger has no secret of the site),
    // before and after the secret that signed the real one is revoked.
    const now = Math.floor(Date.now() / 1000);
    const forged = signGate(
      {
        siteId: site.siteId,
        ref: item.gate_id,
        path: item.url,
        micros: BigInt(item.amount),
        chainId: app.chain.chainId,
        asset: app.chain.usdc,
        payTo: to,
        iat: now,
        exp: now + 600,
      },
      'not the site’s secret',
    );
    const stolen = async () => {
      const byHash = await app.call('POST', `/v1/gates/${forged}/verify`, { body: { tx_hash: item.tx_hash } });
      expect(byHash.status).toBeGreaterThanOrEqual(400);
      expect(byHash.body.access_token).toBeUndefined();
      const byProof = await app.call('POST', `/v1/gates/${forged}/verify`, { body: { payment: replayed } });
      expect({ status: byProof.status, token: byProof.body.access_token }).toEqual({ status: 404, token: undefined });
      expect((await app.call('GET', `/v1/gates/${forged}`)).status).toBe(404);
    };
    await stolen();

    // The payer, with its gate, still gets its token back.
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: replayed } });
    expect(again.body.access_token).toBe(paid.body.access_token);

    // After a revocation of the secret that signed its gate, the payer's own gate still answers it.
    const revoked = await app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, {
      body: { grace_seconds: 0 },
      headers: publisher.auth,
    });
    expect(revoked.status).toBe(200);
    await stolen();
    const afterRevocation = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: replayed } });
    expect(afterRevocation.status).toBe(200);
    expect(afterRevocation.body.access_token).toEqual(expect.any(String));
  });

  it('cannot be had through a gate another publisher signs for its own site with the payer’s gate ref', async () => {
    // The ref is public (histories, the payer's tools); any publisher holds a secret of its own.
    const gate = await openGate(app, site, '/public/other-report');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, victim, gate) },
    });
    expect(paid.status).toBe(200);
    const { replayed } = await authorizationFromCalldata(paid.body.tx_hash as Hash);
    const attacker = await pricedSite(app, newWallet().address);
    for (const path of ['/anything', '/public/other-report']) {
      const forged = middlewareGate(app, attacker.site, payTo, path, { ref: gate.ref, ttlSeconds: 600 }).id;
      const byProof = await app.call('POST', `/v1/gates/${forged}/verify`, { body: { payment: replayed } });
      expect({ status: byProof.status, token: byProof.body.access_token }).toEqual({ status: 404, token: undefined });
      const view = await app.call('GET', `/v1/gates/${forged}`);
      expect({ status: view.status, tx_hash: view.body.tx_hash }).toEqual({ status: 404, tx_hash: undefined });
    }
    // The payer's own gate still answers it.
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: replayed } });
    expect(again.body.access_token).toBe(paid.body.access_token);
  });

  /** The settled authorization of `hash`, rebuilt from its calldata as anyone can, as an x402 v1 payment. */
  async function authorizationFromCalldata(hash: Hash) {
    const transaction = await app.chain.publicClient.getTransaction({ hash });
    const { args } = decodeFunctionData({ abi: USDC_ABI, data: transaction.input });
    const [from, to, value, validAfter, validBefore, nonce, ...signatureParts] = args as readonly unknown[];
    const signature =
      signatureParts.length === 1
        ? (signatureParts[0] as `0x${string}`)
        : (`0x${(signatureParts[1] as string).slice(2)}${(signatureParts[2] as string).slice(2)}${Number(signatureParts[0]).toString(16).padStart(2, '0')}` as const);
    const authorization = { from, to, value, validAfter, validBefore, nonce } as TransferAuthorization;
    return { replayed: exactPaymentV1('local', authorization, signature), to: to as `0x${string}` };
  }
});
