import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createAgent, type BatchSettlementOptions } from './agent';

/** createAgent's checks of its options: no network, no chain. */
const agentWith = (batchSettlement: BatchSettlementOptions) =>
  createAgent({
    account: privateKeyToAccount(generatePrivateKey()),
    maxPriceUsd: '0.05',
    budgetUsd: '1',
    batchSettlement,
  });

describe('batchSettlement.maxChannels', () => {
  it.each([1, 4, 50])('takes %s', (maxChannels) => {
    expect(() => agentWith({ depositUsd: '0.1', maxChannels })).not.toThrow();
  });

  it('defaults when not given', () => {
    expect(() => agentWith({ depositUsd: '0.1' })).not.toThrow();
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2' as unknown as number, null as unknown as number])(
    'refuses %p: a whole number from 1',
    (maxChannels) => {
      expect(() => agentWith({ depositUsd: '0.1', maxChannels })).toThrow(
        new RangeError(`batchSettlement.maxChannels: a whole number of channels from 1, got ${maxChannels}`),
      );
    },
  );
});
