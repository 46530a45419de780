import { USDC_ABI } from '@crawlgate/core';
import { testUsdcAbi } from './artifacts/test-usdc';

describe('core USDC_ABI against the test token', () => {
  it('matches our test token, entry for entry, so calls encode the same on chain', () => {
    const signature = (entry: { type: string; name?: string; inputs?: readonly { type: string }[] }) =>
      `${entry.type} ${entry.name}(${(entry.inputs ?? []).map((input) => input.type).join(',')})`;
    const token = new Set(testUsdcAbi.map(signature));
    for (const entry of USDC_ABI) expect(token).toContain(signature(entry));
    expect(USDC_ABI.filter((entry) => entry.name === 'transferWithAuthorization')).toHaveLength(2);
  });
});
