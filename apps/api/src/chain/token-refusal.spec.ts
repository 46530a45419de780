import { blacklistTestUsdc, mintTestUsdc } from '@crawlgate/devchain';
import type { Address } from 'viem';
import { newWallet } from '../../test/test-agent';
import { testChainContext } from '../../test/test-chain';
import { tokenRefusesOnly } from './token-refusal';

/** On the worker's local chain, with TestUSDC's blacklist (as USDC's). */
describe('tokenRefusesOnly', () => {
  const chain = testChainContext();
  const probe = async (from: Address, to: Address, amount = 1_000n) =>
    tokenRefusesOnly(chain, { token: chain.usdc, from, to, control: newWallet().address, amount });
  const blacklist = (account: Address) => blacklistTestUsdc({ rpcUrl: chain.rpcUrl, usdc: chain.usdc, account });
  const funded = async () => {
    const holder = newWallet().address;
    await mintTestUsdc({ rpcUrl: chain.rpcUrl, usdc: chain.usdc, to: holder, amount: 10_000n });
    return holder;
  };

  it('is true when the token refuses that recipient alone', async () => {
    const [holder, refused] = [await funded(), newWallet().address];
    await blacklist(refused);
    expect(await probe(holder, refused)).toBe(true);
  });

  it('is false when the transfer goes through, or when every recipient would be refused', async () => {
    const holder = await funded();
    expect(await probe(holder, newWallet().address)).toBe(false);
    expect(await probe(holder, newWallet().address, 20_000n)).toBe(false); // short of funds
    const refusedSender = await funded();
    await blacklist(refusedSender);
    expect(await probe(refusedSender, newWallet().address)).toBe(false);
    const refused = newWallet().address;
    await blacklist(refused);
    expect(await probe(refusedSender, refused)).toBe(false);
  });

  it('throws when the node cannot say', async () => {
    const down = testChainContext(undefined, 'http://127.0.0.1:9');
    await expect(
      tokenRefusesOnly(down, {
        token: chain.usdc,
        from: newWallet().address,
        to: newWallet().address,
        control: newWallet().address,
        amount: 1n,
      }),
    ).rejects.toThrow();
  });
});
