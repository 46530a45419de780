import { newWallet, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('POST /v1/dev/faucet', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
  });
  afterAll(() => app.close());

  it('mints test USDC on the local network', async () => {
    const wallet = newWallet();
    const response = await app.call('POST', '/v1/dev/faucet', {
      body: { address: wallet.address.toLowerCase(), amount_usd: '2.5' },
    });
    expect(response).toMatchObject({
      status: 200,
      body: { address: wallet.address, minted: '2500000', balance: '2500000' },
    });
    expect(await usdcBalance(app, wallet.address)).toBe(2_500_000n);
  });

  it.each([
    [{ address: '0x12', amount_usd: '1' }, 'address'],
    [{ address: newWallet().address, amount_usd: '0' }, 'amount_usd'],
    [{ address: newWallet().address, amount_usd: '10000.000001' }, 'amount_usd'],
    [{ address: newWallet().address, amount_usd: '1.1234567' }, 'amount_usd'],
    [{ address: newWallet().address, amount_usd: -1 }, 'amount_usd'],
  ])('answers 422 for %p', async (body, field) => {
    const response = await app.call('POST', '/v1/dev/faucet', { body });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', field]);
  });

  it('does not exist on other networks', async () => {
    const testnet = await startTestApp({ config: { chain: { network: 'base-sepolia' } } });
    const response = await testnet.call('POST', '/v1/dev/faucet', {
      body: { address: newWallet().address, amount_usd: '1' },
    });
    expect(response.status).toBe(404);
    await testnet.close();
  });
});
