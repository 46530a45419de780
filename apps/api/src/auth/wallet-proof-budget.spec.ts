/*
 * The payment history's wallet proof asks the chain only within a budget: per address, and per
 * client across the addresses it names. A stranger's proof for an address with code (or a wrapper
 * for a wallet not deployed yet, ERC-6492, whose "factory" is the stranger's pick) is an eth_call;
 * without the budget one client could have the node run them without end, naming a fresh address
 * each time. Real HTTP, the local chain.
 */

import { historyHeaders, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { WALLET_PROOF_CHAIN_CHECKS_PER_CLIENT, WALLET_PROOF_CHAIN_CHECKS_PER_WALLET } from '../rate-limit/limits';

describe('GET /v1/agents/me/payments wallet proofs that ask the chain', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** The status of a stranger's proof under `address`. */
  const strangerUnder = async (address: string) =>
    app.call('GET', '/v1/agents/me/payments', { headers: await historyHeaders(app, newWallet(), { address }) });

  it('are counted per address, then per client across addresses; a wallet’s own proof asks no chain and is answered', async () => {
    const perWallet = WALLET_PROOF_CHAIN_CHECKS_PER_WALLET.limit;
    const perClient = WALLET_PROOF_CHAIN_CHECKS_PER_CLIENT.limit;
    const victim = newWallet().address;
    const underVictim: number[] = [];
    for (let i = 0; i < perWallet; i++) underVictim.push((await strangerUnder(victim)).status);
    expect(underVictim).toEqual(Array(perWallet).fill(401));
    const overWallet = await strangerUnder(victim);
    expect(overWallet).toMatchObject({ status: 429, body: { detail: expect.stringMatching(/this address.*chain/) } });
    expect(Number(overWallet.headers.get('retry-after'))).toBeGreaterThan(0);

    const fresh: number[] = [];
    for (let i = perWallet; i < perClient; i++) fresh.push((await strangerUnder(newWallet().address)).status);
    expect(fresh).toEqual(Array(perClient - perWallet).fill(401));
    expect(await strangerUnder(newWallet().address)).toMatchObject({
      status: 429,
      body: { detail: expect.stringMatching(/this client.*chain/) },
    });

    const own = newWallet();
    expect((await app.call('GET', '/v1/agents/me/payments', { headers: await historyHeaders(app, own) })).status).toBe(
      200,
    );
  }, 60_000);
});
