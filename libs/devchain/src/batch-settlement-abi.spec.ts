import {
  BATCH_SETTLEMENT_ABI,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
} from '@crawlgate/core';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from './batch-settlement-deploy';
import { batchSettlementAbi } from './artifacts/batch-settlement';

describe('core BATCH_SETTLEMENT_ABI against our escrow', () => {
  it('matches the compiled contract entry for entry, outputs included, so the API encodes and decodes what the escrow does', () => {
    const key = (entry: { type: string; name?: string }) => `${entry.type} ${entry.name}`;
    const compiled = new Map(batchSettlementAbi.map((entry) => [key(entry), entry]));
    for (const entry of BATCH_SETTLEMENT_ABI) {
      const twin = compiled.get(key(entry)) as Record<string, unknown> | undefined;
      expect(twin).toBeDefined();
      expect(
        JSON.parse(JSON.stringify(entry, ['type', 'name', 'inputs', 'outputs', 'components', 'stateMutability'])),
      ).toEqual(
        JSON.parse(JSON.stringify(twin, ['type', 'name', 'inputs', 'outputs', 'components', 'stateMutability'])),
      );
    }
    expect(BATCH_SETTLEMENT_ABI.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['channels', 'deposit', 'claimWithSignature', 'settle', 'pendingWithdrawals']),
    );
  });

  it('places the escrow where core (and so the API) looks for it', () => {
    // devchain keeps its own copy: the API's jest global set-up loads it without path mapping.
    expect(BATCH_SETTLEMENT_ADDRESS).toBe(X402_BATCH_SETTLEMENT_ADDRESS);
    expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe(X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS);
  });
});
