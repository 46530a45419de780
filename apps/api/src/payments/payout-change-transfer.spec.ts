import { transferProofMessage } from '@crawlgate/core';
import type { PrivateKeyAccount } from 'viem/accounts';
import { middlewareGate, namePayoutAddress, openGate, pricedSite, registerPublisher } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet, sendUsdc, signPayment, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A publisher replaces its payout address (the old wallet's key was lost or stolen). Gates minted
 * before the change must not pay the old wallet (assertPayeeStands), and a payment from the gate's
 * own pay_to is refused because whoever holds the old key "would read for the gas alone".
 * Authorizations and vouchers were refused; a tx_hash transfer was not (helper-348's F1): the old
 * key's holder transferred from a second wallet of its own to the old address (the money came back
 * to it) and got the page, for any gate it collected before the change. A transfer mined before
 * the change was made in good faith to the publisher's address then, and still pays its gate.
 */
describe('a transfer to a payout address its publisher has replaced', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
  });
  afterAll(() => app.close());

  const send = (from: PrivateKeyAccount, to: `0x${string}`, value: bigint) => sendUsdc(app, from, to, value);

  it('refuses a transfer to the replaced address, as it refuses an authorization to it', async () => {
    const lost = newWallet(); // the old payout wallet, whose key the thief holds
    const { publisher, site } = await pricedSite(app, lost.address);
    // The thief collects gates while the old address is still the payout (one per page it wants).
    const collected = await openGate(app, site, '/premium/report');
    const collected2 = await openGate(app, site, '/premium/other');
    expect(collected.pay_to.toLowerCase()).toBe(lost.address.toLowerCase());

    // The publisher notices and replaces the payout address.
    const replaced = newWallet().address;
    const changed = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: replaced },
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });
    expect(changed.status).toBe(200);

    // An honest agent's authorization for the old gate is refused: "the old wallet is not paid".
    const honest = newWallet();
    await fundUsdc(app, honest.address, '1');
    const auth = await app.call('POST', `/v1/gates/${collected2.id}/verify`, {
      body: { payment: await signPayment(app, honest, collected2) },
    });
    expect(auth.status).toBe(409);

    // The thief: a second wallet pays the old address (its own), after the change.
    const second = newWallet();
    await fundUsdc(app, second.address, '1');
    await fundEth(app, second.address);
    const thiefBefore = (await usdcBalance(app, lost.address)) + (await usdcBalance(app, second.address));
    const hash = await send(second, lost.address, BigInt(collected.amount));
    const proof = {
      tx_hash: hash,
      signature: await second.signMessage({ message: transferProofMessage(collected.ref, hash) }),
    };
    const paid = await app.call('POST', `/v1/gates/${collected.id}/verify`, { body: proof });
    const thiefAfter = (await usdcBalance(app, lost.address)) + (await usdcBalance(app, second.address));
    // The thief's money never left it, and the publisher's new wallet got nothing.
    expect(thiefAfter).toBe(thiefBefore);
    expect(await usdcBalance(app, replaced)).toBe(0n);
    // THE RULE: no token for a page whose payment went to a wallet the publisher disowned.
    expect({ status: paid.status, token: paid.body.access_token }).toEqual({
      status: 409,
      token: undefined,
    });
  });

  it('honours a transfer mined before the change: it paid the publisher’s address of the time', async () => {
    const old = newWallet();
    const { publisher, site } = await pricedSite(app, old.address);
    const gate = await openGate(app, site, '/premium/in-flight');
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    await fundEth(app, agent.address);
    const hash = await send(agent, old.address, BigInt(gate.amount));
    // The change lands in a later second than the transfer's block (times are compared in whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const changed = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: newWallet().address },
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });
    expect(changed.status).toBe(200);
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { tx_hash: hash, signature: await agent.signMessage({ message: transferProofMessage(gate.ref, hash) }) },
    });
    expect(paid.status === 200 ? paid.status : paid.body).toBe(200);
    expect(paid.body.access_token).toEqual(expect.any(String));
  });

  it('still refuses it after a second change: the address had been replaced when the transfer was mined', async () => {
    // The time of the last change alone let this through (helper-349's F1): mined after A→B, before B→C.
    const lost = newWallet();
    const { publisher, site } = await pricedSite(app, lost.address);
    const collected = await openGate(app, site, '/premium/twice');
    const setPayout = async (address: string) => {
      const changed = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: address },
        headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
      });
      expect(changed.status).toBe(200);
    };
    const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1100));
    await setPayout(newWallet().address);
    await nextSecond();
    const second = newWallet();
    await fundUsdc(app, second.address, '1');
    await fundEth(app, second.address);
    const hash = await send(second, lost.address, BigInt(collected.amount));
    const proof = {
      tx_hash: hash,
      signature: await second.signMessage({ message: transferProofMessage(collected.ref, hash) }),
    };
    expect((await app.call('POST', `/v1/gates/${collected.id}/verify`, { body: proof })).status).toBe(409);
    // Later the publisher moves to yet another wallet; the very same proof is sent again.
    await nextSecond();
    await setPayout(newWallet().address);
    const late = await app.call('POST', `/v1/gates/${collected.id}/verify`, { body: proof });
    expect({ status: late.status, token: late.body.access_token }).toEqual({ status: 409, token: undefined });
  });

  it('refuses it when a proof took the address from a publisher that named it without one', async () => {
    // A publisher names an address it cannot sign for; its holder proves it for a publisher of its own.
    const holder = newWallet();
    const { site } = await pricedSite(app, holder.address);
    const gate = await openGate(app, site, '/premium/taken');
    await namePayoutAddress(app, await registerPublisher(app), holder);
    const second = newWallet();
    await fundUsdc(app, second.address, '1');
    await fundEth(app, second.address);
    const hash = await send(second, holder.address, BigInt(gate.amount));
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { tx_hash: hash, signature: await second.signMessage({ message: transferProofMessage(gate.ref, hash) }) },
    });
    expect({ status: paid.status, token: paid.body.access_token }).toEqual({ status: 409, token: undefined });
  });

  it('refuses such a transfer for a gate a middleware minted with the old pay_to before it reloaded the terms', async () => {
    // The middleware reloads the site's terms every 30 s (longer while the API is unreachable,
    // until its terms lapse): until then it keeps minting gates naming the old pay_to.
    const lost = newWallet();
    const { publisher, site } = await pricedSite(app, lost.address);
    const changed = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: newWallet().address },
      headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
    });
    expect(changed.status).toBe(200);
    const { id, terms } = middlewareGate(app, site, lost.address, '/premium/late');
    const second = newWallet();
    await fundUsdc(app, second.address, '1');
    await fundEth(app, second.address);
    const hash = await send(second, lost.address, 10_000n);
    const paid = await app.call('POST', `/v1/gates/${id}/verify`, {
      body: {
        tx_hash: hash,
        signature: await second.signMessage({ message: transferProofMessage(terms.ref, hash) }),
      },
    });
    expect({ status: paid.status, token: paid.body.access_token }).toEqual({ status: 409, token: undefined });
  });
});
