import { payoutProofMessage } from '@crawlgate/core';
import { getAddress, type PrivateKeyAccount } from 'viem';
import { createSite, openGate, pricedSite, registerPublisher, type TestPublisher } from '../../test/fixtures';
import { deployTestWallet, fundUsdc, newWallet, signPayment } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A payer's signature names the address it pays, not the site: two publishers naming one payout
 * address could spend each other's payers' payments (a voucher or an authorization taken at one's
 * site, sent to the other's gate). So an address is named by one publisher only, unless each that
 * names it proved it holds the address's key.
 */
describe('payout addresses: one publisher each, unless the address signs for another', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const name = (publisher: TestPublisher, body: Record<string, unknown>) =>
    app.call('PATCH', '/v1/publishers/me', {
      body,
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });
  const accountOf = async (publisher: TestPublisher) =>
    (await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).body;
  const proofBy = (wallet: PrivateKeyAccount, publisher: TestPublisher, address: string = wallet.address) =>
    wallet.signMessage({ message: payoutProofMessage(address, publisher.publisherId) });

  it('refuses an address another publisher names, in any spelling, and tells which message proves it', async () => {
    const wallet = newWallet();
    const first = await registerPublisher(app);
    const second = await registerPublisher(app);
    const named = await name(first, { payout_address: wallet.address });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({ payout_address: wallet.address, payout_address_proven: false });

    for (const spelling of [
      wallet.address,
      wallet.address.toLowerCase(),
      `0x${wallet.address.slice(2).toUpperCase()}`,
    ]) {
      const refused = await name(second, { payout_address: spelling });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/Another publisher names/);
      expect(refused.body.detail).toMatch(/payout_proof/);
      expect(refused.body.payout_proof_message).toBe(payoutProofMessage(wallet.address, second.publisherId));
    }
    expect(await accountOf(second)).toMatchObject({ payout_address: null, payout_address_proven: false });
    // With no payout address of its own, the second publisher's site cannot charge at all.
    const site = await createSite(app, second);
    await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
      body: { default_price_usd: '0.01', rules: [] },
      headers: second.auth,
    });
    const gate = await app.call('POST', '/v1/gates', {
      body: { url: '/a' },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(gate.status).toBe(409);
    expect(await accountOf(first)).toMatchObject({ payout_address: wallet.address });
  });

  it("takes it with the address's signature of the publisher's message: an address is shared only by publishers that each proved it", async () => {
    const wallet = newWallet();
    const first = await registerPublisher(app);
    const second = await registerPublisher(app);
    const proven = await name(first, { payout_address: wallet.address, payout_proof: await proofBy(wallet, first) });
    expect(proven.status).toBe(200);
    expect(proven.body).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
    expect((await name(second, { payout_address: wallet.address })).status).toBe(409);
    const shared = await name(second, { payout_address: wallet.address, payout_proof: await proofBy(wallet, second) });
    expect(shared.status).toBe(200);
    expect(await accountOf(first)).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
    expect(await accountOf(second)).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
    // Named again as it is (a settings form saved once more), the address keeps its proof.
    const again = await name(first, { payout_address: wallet.address, name: 'Saved again' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ name: 'Saved again', payout_address_proven: true });
  });

  it("takes a contract wallet's ERC-1271 signature (its owner's key), not a stranger's", async () => {
    const keyHolder = newWallet();
    const smartWallet = await deployTestWallet(app, keyHolder);
    expect((await name(await registerPublisher(app), { payout_address: smartWallet })).status).toBe(200);
    const claimant = await registerPublisher(app);
    const signedBy = (signer: PrivateKeyAccount) =>
      signer.signMessage({ message: payoutProofMessage(smartWallet, claimant.publisherId) });
    const stranger = await name(claimant, { payout_address: smartWallet, payout_proof: await signedBy(newWallet()) });
    expect(stranger.status).toBe(400);
    const own = await name(claimant, { payout_address: smartWallet, payout_proof: await signedBy(keyHolder) });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ payout_address: getAddress(smartWallet), payout_address_proven: true });
  });

  it('a proof takes the address from publishers that named it without one: their open gates no longer pay it', async () => {
    const wallet = newWallet();
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const { publisher: squatter, site } = await pricedSite(app, wallet.address);
    const offer = await openGate(app, site, '/squatted');
    const owner = await registerPublisher(app);
    const taken = await name(owner, { payout_address: wallet.address, payout_proof: await proofBy(wallet, owner) });
    expect(taken.status).toBe(200);
    expect(await accountOf(squatter)).toMatchObject({ payout_address: null, payout_address_proven: false });

    // A payment for the squatter's gate, opened while it still named the address, is refused uncharged.
    const paid = await app.call('POST', `/v1/gates/${offer.id}/verify`, {
      body: { payment: await signPayment(app, payer, offer) },
    });
    expect(paid.status).toBe(409);
    expect(paid.body.access_token).toBeUndefined();
    expect(
      (await app.call('POST', '/v1/gates', { body: { url: '/b' }, headers: { 'x-site-token': site.siteToken } }))
        .status,
    ).toBe(409);
    expect((await name(squatter, { payout_address: wallet.address })).status).toBe(409);
    expect(await accountOf(owner)).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
  });

  it("refuses another key's signature, another publisher's proof and another address's, and changes nothing", async () => {
    const wallet = newWallet();
    const other = newWallet();
    const owner = await registerPublisher(app);
    expect((await name(owner, { payout_address: wallet.address })).status).toBe(200);
    const claimant = await registerPublisher(app);
    const ownersProof = await proofBy(wallet, owner);
    const attempts = [
      await other.signMessage({ message: payoutProofMessage(wallet.address, claimant.publisherId) }),
      ownersProof,
      await proofBy(wallet, claimant, other.address),
      `${ownersProof.slice(0, -2)}1f`,
      '0x1234',
    ];
    for (const payout_proof of attempts) {
      const refused = await name(claimant, { payout_address: wallet.address, payout_proof });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/payout_proof is not a signature by/);
    }
    expect(await accountOf(claimant)).toMatchObject({ payout_address: null, payout_address_proven: false });
    expect(await accountOf(owner)).toMatchObject({ payout_address: wallet.address, payout_address_proven: false });
  });

  it('refuses a malformed payout_proof, or one without an address to prove', async () => {
    const wallet = newWallet();
    const publisher = await registerPublisher(app);
    const proof = await proofBy(wallet, publisher);
    for (const body of [
      { payout_address: wallet.address, payout_proof: 'not hex' },
      { payout_address: wallet.address, payout_proof: `0x${'ab'.repeat(5000)}` },
      { payout_address: wallet.address, payout_proof: 12 },
      { payout_proof: proof },
      { payout_address: null, payout_proof: proof },
    ]) {
      const refused = await name(publisher, body);
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'payout_proof'] })]);
    }
    expect(await accountOf(publisher)).toMatchObject({ payout_address: null });
  });

  it('naming another address without a proof drops the proof; clearing it frees the address', async () => {
    const wallet = newWallet();
    const next = newWallet();
    const publisher = await registerPublisher(app);
    expect(
      (await name(publisher, { payout_address: wallet.address, payout_proof: await proofBy(wallet, publisher) }))
        .status,
    ).toBe(200);
    const moved = await name(publisher, { payout_address: next.address });
    expect(moved.body).toMatchObject({ payout_address: next.address, payout_address_proven: false });
    const cleared = await name(publisher, { payout_address: null });
    expect(cleared.body).toMatchObject({ payout_address: null, payout_address_proven: false });
    expect((await name(await registerPublisher(app), { payout_address: next.address })).status).toBe(200);
  });

  it('of publishers naming one address at once without a proof, exactly one gets it', async () => {
    for (let round = 0; round < 6; round++) {
      const wallet = newWallet();
      const publishers = await Promise.all([0, 1, 2].map(() => registerPublisher(app)));
      const answers = await Promise.all(
        publishers.map((publisher) => name(publisher, { payout_address: wallet.address })),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
      const holders = (await Promise.all(publishers.map(accountOf))).filter((body) => body.payout_address !== null);
      expect(holders).toHaveLength(1);
    }
  });

  it('proofs crossing each other (each taking the address the other named) both go through', async () => {
    // Each takes the other's row from its address before writing its own: on PostgreSQL, row locks
    // taken in two orders deadlocked, and one of the two answered 500.
    for (let round = 0; round < 8; round++) {
      const [x, z] = [newWallet(), newWallet()];
      const [first, second] = await Promise.all([0, 1].map(() => registerPublisher(app)));
      expect((await name(first, { payout_address: z.address })).status).toBe(200);
      expect((await name(second, { payout_address: x.address })).status).toBe(200);
      const answers = await Promise.all([
        name(first, { payout_address: x.address, payout_proof: await proofBy(x, first) }),
        name(second, { payout_address: z.address, payout_proof: await proofBy(z, second) }),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(await accountOf(first)).toMatchObject({ payout_address: x.address, payout_address_proven: true });
      expect(await accountOf(second)).toMatchObject({ payout_address: z.address, payout_address_proven: true });
    }
  });

  it('a proven claim racing unproven ones never leaves them sharing the address', async () => {
    for (let round = 0; round < 6; round++) {
      const wallet = newWallet();
      const owner = await registerPublisher(app);
      const others = await Promise.all([0, 1].map(() => registerPublisher(app)));
      const proof = await proofBy(wallet, owner);
      const [proven, ...unproven] = await Promise.all([
        name(owner, { payout_address: wallet.address, payout_proof: proof }),
        ...others.map((publisher) => name(publisher, { payout_address: wallet.address })),
      ]);
      expect(proven.status).toBe(200);
      for (const answer of unproven) expect([200, 409]).toContain(answer.status);
      for (const publisher of others) expect((await accountOf(publisher)).payout_address).toBeNull();
      expect(await accountOf(owner)).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
    }
  });
});
