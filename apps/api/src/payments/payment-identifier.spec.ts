import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  generatePaymentId,
} from '@x402/extensions/payment-identifier';
import { exactPaymentV2 } from '@crawlgate/core';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createSite, openGate, pricedSite, type TestPublisher, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signOffer, transfersTo, type Tamper } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/**
 * x402 payment-identifier on POST /v1/gates/{id}/verify, over HTTP on the local chain. Ids are
 * scoped by site and payer: nobody else's id can fetch or block an answer.
 */
describe('payment-identifier (x402 idempotency id)', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  const payTo = newWallet().address;
  const agent = newWallet();
  const other = newWallet();

  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ publisher, site } = await pricedSite(app, payTo));
    await fundUsdc(app, agent.address, '5');
    await fundUsdc(app, other.address, '5');
  });
  afterAll(() => app.close());

  const verify = (gateId: string, body: unknown) => app.call('POST', `/v1/gates/${gateId}/verify`, { body });
  const chargesOf = async (hash: string) => (await transfersTo(app, payTo)).filter((t) => t.hash === hash).length;

  /** An x402 v2 payment, as @x402/fetch sends it, carrying `id` through x402's own client helper. */
  async function v2Payment(
    wallet: PrivateKeyAccount,
    gate: Awaited<ReturnType<typeof openGate>>,
    id: string | undefined,
    tamper: Tamper = {},
  ) {
    const { authorization, signature } = await signOffer(app, wallet, gate, tamper);
    const extensions: Record<string, unknown> = { 'payment-identifier': declarePaymentIdentifierExtension(false) };
    if (id !== undefined) appendPaymentIdentifierToExtensions(extensions, id);
    const [req] = gate.accepts;
    const accepted = {
      scheme: 'exact',
      network: `eip155:${gate.chain_id}`,
      amount: gate.amount,
      asset: gate.asset,
      payTo: gate.pay_to,
      maxTimeoutSeconds: req.maxTimeoutSeconds,
      extra: req.extra,
    };
    return exactPaymentV2(accepted, authorization, signature, { extensions });
  }

  it('answers the same id and payment with the stored answer, settling once', async () => {
    const gate = await openGate(app, site, '/pid/same');
    const id = generatePaymentId();
    const payment = await v2Payment(agent, gate, id);
    const first = await verify(gate.id, { payment });
    expect(first.status).toBe(200);
    const again = await verify(gate.id, { payment });
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(await chargesOf(first.body.tx_hash)).toBe(1);
  });

  it('takes the same payment re-serialized with its keys in another order as the same', async () => {
    const gate = await openGate(app, site, '/pid/reordered');
    const payment = await v2Payment(agent, gate, generatePaymentId());
    const first = await verify(gate.id, { payment });
    const reordered = Object.fromEntries(Object.entries(payment).reverse());
    expect(await verify(gate.id, { payment: reordered })).toMatchObject({ status: 200, body: first.body });
  });

  it('refuses the same id with another payment for the same gate: 409 with a detail, no second charge', async () => {
    const gate = await openGate(app, site, '/pid/other-payload');
    const id = generatePaymentId();
    const first = await verify(gate.id, { payment: await v2Payment(agent, gate, id) });
    expect(first.status).toBe(200);
    const before = (await transfersTo(app, payTo)).length;
    const second = await verify(gate.id, { payment: await v2Payment(agent, gate, id) });
    // Checked as any new payment is: this gate is paid (another gate under the id: the next test).
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/already paid/i);
    expect((await transfersTo(app, payTo)).length).toBe(before);
  });

  it('refuses the same id on another gate of the same site: 409, that gate stays open and unpaid', async () => {
    const first = await openGate(app, site, '/pid/gate-one');
    const second = await openGate(app, site, '/pid/gate-two');
    const id = generatePaymentId();
    expect((await verify(first.id, { payment: await v2Payment(agent, first, id) })).status).toBe(200);
    const before = (await transfersTo(app, payTo)).length;
    const reused = await verify(second.id, { payment: await v2Payment(agent, second, id) });
    expect(reused.status).toBe(409);
    expect(reused.body.detail).toMatch(/payment identifier/i);
    expect((await transfersTo(app, payTo)).length).toBe(before);
    expect((await app.call('GET', `/v1/gates/${second.id}`)).body.status).toBe('open');
  });

  it('refuses the very same payment and id posted to a fresh gate: 409', async () => {
    const first = await openGate(app, site, '/pid/fresh');
    const payment = await v2Payment(agent, first, generatePaymentId());
    expect((await verify(first.id, { payment })).status).toBe(200);
    const fresh = await openGate(app, site, '/pid/fresh');
    expect((await verify(fresh.id, { payment })).status).toBe(409);
  });

  it('lets another payer use the same id for its own payment: neither blocked nor given the first answer', async () => {
    const victimGate = await openGate(app, site, '/pid/victim');
    const id = generatePaymentId();
    const victimPayment = await v2Payment(agent, victimGate, id);
    const victim = await verify(victimGate.id, { payment: victimPayment });
    expect(victim.status).toBe(200);

    const attackerGate = await openGate(app, site, '/pid/attacker');
    const attacker = await verify(attackerGate.id, { payment: await v2Payment(other, attackerGate, id) });
    expect(attacker.status).toBe(200);
    expect(attacker.body.payer).toBe(other.address.toLowerCase());
    expect(attacker.body.tx_hash).not.toBe(victim.body.tx_hash);
    expect(attacker.body.access_token).not.toBe(victim.body.access_token);
    // The victim's answer is still its own.
    expect(await verify(victimGate.id, { payment: victimPayment })).toMatchObject({ status: 200, body: victim.body });
  });

  it('gives nothing away to someone posing as the payer with its id: the answer any other id gets, never the stored one', async () => {
    const gate = await openGate(app, site, '/pid/posing');
    const id = generatePaymentId();
    const paid = await verify(gate.id, { payment: await v2Payment(agent, gate, id) });
    expect(paid.status).toBe(200);
    const forged = await verify(gate.id, { payment: await v2Payment(agent, gate, id, { signer: other }) });
    const guessed = await verify(gate.id, {
      payment: await v2Payment(agent, gate, generatePaymentId(), { signer: other }),
    });
    expect(forged.status).toBe(409);
    expect(forged.body).toEqual(guessed.body);
    expect(JSON.stringify(forged.body)).not.toContain(paid.body.access_token);
    const elsewhere = await openGate(app, site, '/pid/posing-elsewhere');
    const forgedElsewhere = await verify(elsewhere.id, {
      payment: await v2Payment(agent, elsewhere, id, { signer: other }),
    });
    expect(forgedElsewhere.status).toBe(402);
    expect(JSON.stringify(forgedElsewhere.body)).not.toContain(paid.body.access_token);
  });

  it("answers a payment forged in the payer's name the same whether or not the payer used its id on the site", async () => {
    const gate = await openGate(app, site, '/pid/oracle');
    const usedId = generatePaymentId();
    expect((await verify(gate.id, { payment: await v2Payment(agent, gate, usedId) })).status).toBe(200);
    // Anyone: a gate of the site, the payer's public address, a key of its own, and a candidate id;
    // with terms the API refuses (another recipient), and with the gate's own terms.
    const probe = await openGate(app, site, '/pid/oracle-probe');
    for (const tamper of [{ signer: other, to: newWallet().address }, { signer: other }] as Tamper[]) {
      const ask = async (id: string) => verify(probe.id, { payment: await v2Payment(agent, probe, id, tamper) });
      const used = await ask(usedId);
      const unused = await ask(generatePaymentId());
      expect(used.status).toBe(402);
      expect(used.body).toEqual(unused.body);
    }
  });

  it('tells nobody holding a public authorization which id its payer used: the same 409 whatever the id', async () => {
    const gate = await openGate(app, site, '/pid/probed');
    const id = generatePaymentId();
    const payment = await v2Payment(agent, gate, id);
    expect((await verify(gate.id, { payment })).status).toBe(200);
    // Its authorization is public once settled (the transaction's calldata), signed as it is: posted
    // to a gate of the attacker's own asking, with a guessed id, a wrong one, or none.
    const probing = await openGate(app, site, '/pid/probing');
    const withId = (guess: string | undefined) => {
      const extensions: Record<string, unknown> = { 'payment-identifier': declarePaymentIdentifierExtension(false) };
      if (guess !== undefined) appendPaymentIdentifierToExtensions(extensions, guess);
      return { ...payment, extensions };
    };
    const right = await verify(probing.id, { payment: withId(id) });
    const wrong = await verify(probing.id, { payment: withId(generatePaymentId()) });
    const none = await verify(probing.id, { payment: withId(undefined) });
    expect(right.status).toBe(409);
    expect(right.body).toEqual(wrong.body);
    expect(none.body).toEqual(wrong.body);
  });

  it('keeps ids per site: the same payer and id on another site is another payment', async () => {
    const otherSite = await createSite(app, publisher);
    await app.call('PUT', `/v1/sites/${otherSite.siteId}/pricing`, {
      body: { default_price_usd: '0.01', rules: [] },
      headers: publisher.auth,
    });
    const id = generatePaymentId();
    const here = await openGate(app, site, '/pid/per-site');
    const there = await openGate(app, otherSite, '/pid/per-site');
    const a = await verify(here.id, { payment: await v2Payment(agent, here, id) });
    const b = await verify(there.id, { payment: await v2Payment(agent, there, id) });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.tx_hash).not.toBe(b.body.tx_hash);
  });

  it('settles two identical submissions sent at once only once, and answers both with it', async () => {
    const gate = await openGate(app, site, '/pid/concurrent');
    const payment = await v2Payment(agent, gate, generatePaymentId());
    const before = (await transfersTo(app, payTo)).length;
    const [a, b] = await Promise.all([verify(gate.id, { payment }), verify(gate.id, { payment })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect((await transfersTo(app, payTo)).length).toBe(before + 1);
  });

  it('answers two different payments under one id sent at once: one settles, the other 409', async () => {
    const gate = await openGate(app, site, '/pid/concurrent-conflict');
    const id = generatePaymentId();
    const [p1, p2] = [await v2Payment(agent, gate, id), await v2Payment(agent, gate, id)];
    const before = (await transfersTo(app, payTo)).length;
    const answers = await Promise.all([verify(gate.id, { payment: p1 }), verify(gate.id, { payment: p2 })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect((await transfersTo(app, payTo)).length).toBe(before + 1);
  });

  it('refuses a malformed id with a 4xx and a detail, charging nothing', async () => {
    const gate = await openGate(app, site, '/pid/malformed');
    const payment = await v2Payment(agent, gate, undefined);
    (payment.extensions!['payment-identifier'] as { info: { id?: string } }).info.id = 'short!';
    const before = (await transfersTo(app, payTo)).length;
    const answer = await verify(gate.id, { payment });
    expect(answer.status).toBe(402);
    expect(answer.body).toEqual({ detail: expect.stringMatching(/payment-identifier/), reason: 'invalid_payload' });
    expect((await transfersTo(app, payTo)).length).toBe(before);
  });
});
