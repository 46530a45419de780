import { devPublicClient } from './clients';
import { startAnvil, type AnvilInstance } from './anvil';
import { mineBlocks, revert, snapshot } from './chain-control';

describe('revert', () => {
  let anvil: AnvilInstance;
  beforeAll(async () => {
    anvil = await startAnvil();
  });
  afterAll(() => anvil.stop());

  it('undoes state but not time: blocks mined afterwards carry the wall-clock time', async () => {
    const client = devPublicClient(anvil.rpcUrl);
    const id = await snapshot(anvil.rpcUrl);
    const before = await client.getBlockNumber({ cacheTime: 0 });
    await mineBlocks(anvil.rpcUrl, 3);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await revert(anvil.rpcUrl, id);
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(before);
    await mineBlocks(anvil.rpcUrl, 1);
    const { timestamp } = await client.getBlock({ blockTag: 'latest' });
    expect(Number(timestamp)).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 1);
  });
});
