import { X402_BATCH_SETTLEMENT_ADDRESS } from '@crawlgate/core';
import { getAddress } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { testChainConfig, testChainContext } from '../../test/test-chain';
import { ownAddressRole } from './own-addresses';

describe('ownAddressRole', () => {
  it("names the token, the escrows, the collectors, the relayer and the authorizer, in any spelling; nobody else's", () => {
    const escrow = '0x2222222222222222222222222222222222222222';
    const chain = testChainContext(
      testChainConfig({ batchSettlement: { ...testChainConfig().batchSettlement, escrow } }),
    );
    const batch = chain.batchSettlement!;
    expect(ownAddressRole(chain, chain.usdc.toLowerCase())).toBe('the USDC token contract');
    expect(ownAddressRole(chain, getAddress(escrow))).toBe('the batch-settlement escrow');
    expect(ownAddressRole(chain, X402_BATCH_SETTLEMENT_ADDRESS)).toBe("x402's batch-settlement escrow");
    expect(ownAddressRole(chain, batch.collector)).toMatch(/deposit collector/);
    expect(ownAddressRole(chain, chain.relayer.account.address.toLowerCase())).toMatch(/relayer/);
    expect(ownAddressRole(chain, batch.authorizer.address)).toMatch(/claim authorizer/);
    expect(ownAddressRole(chain, privateKeyToAccount(generatePrivateKey()).address)).toBeUndefined();
  });

  it("still names the token, the relayer and x402's escrow when batch settlement is off", () => {
    const chain = { ...testChainContext(), batchSettlement: null };
    expect(ownAddressRole(chain, chain.usdc)).toBe('the USDC token contract');
    expect(ownAddressRole(chain, chain.relayer.account.address)).toMatch(/relayer/);
    expect(ownAddressRole(chain, X402_BATCH_SETTLEMENT_ADDRESS)).toMatch(/escrow/);
  });
});
