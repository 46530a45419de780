import {
  BATCH_SETTLEMENT_ADDRESS as X402_ESCROW,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS as X402_COLLECTOR,
} from '@x402/evm';
import { DEV_ROLES } from './accounts';
import { startAnvil, type AnvilInstance } from './anvil';
import { erc3009DepositCollectorAbi } from './artifacts/erc3009-deposit-collector';
import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  deployBatchSettlement,
  placeBatchSettlement,
} from './batch-settlement-deploy';
import { batchSettlementDomain } from './batch-settlement-typed-data';
import {
  channelConfig,
  channelState,
  claimSigned,
  depositInto,
  escrowRead,
  voucherClaim,
  type EscrowChain,
} from './batch-settlement-test-kit';
import { usdcDomain } from './authorization';
import { devPublicClient } from './clients';
import { deployTestUsdc, mintTestUsdc } from './deploy';

let anvil: AnvilInstance;
let chain: EscrowChain;

beforeAll(async () => {
  anvil = await startAnvil();
  const client = devPublicClient(anvil.rpcUrl);
  const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
  await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: DEV_ROLES.agents[0].address, amount: 1_000_000n });
  // Nothing placed yet: the first test places it.
  chain = {
    anvil,
    client,
    usdc,
    tokenDomain: usdcDomain(anvil.chainId, usdc),
    contracts: { escrow: X402_ESCROW, collector: X402_COLLECTOR },
    domain: batchSettlementDomain(anvil.chainId, X402_ESCROW),
  };
});
afterAll(() => anvil?.stop());

it('uses the addresses @x402/evm hard-codes', () => {
  expect(BATCH_SETTLEMENT_ADDRESS).toBe(X402_ESCROW);
  expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe(X402_COLLECTOR);
});

it('places the escrow and collector at x402’s addresses; placing again keeps the channels', async () => {
  expect(await chain.client.getCode({ address: BATCH_SETTLEMENT_ADDRESS })).toBeUndefined();
  expect(await placeBatchSettlement({ rpcUrl: anvil.rpcUrl })).toEqual({
    escrow: X402_ESCROW,
    collector: X402_COLLECTOR,
  });
  expect(
    await chain.client.readContract({
      address: X402_COLLECTOR,
      abi: erc3009DepositCollectorAbi,
      functionName: 'escrow',
    }),
  ).toBe(X402_ESCROW);

  const config = channelConfig(chain);
  await depositInto(chain, config, 10_000n);
  await claimSigned(chain, [await voucherClaim(chain, config, 1_000n)]);
  await placeBatchSettlement({ rpcUrl: anvil.rpcUrl });
  expect(await channelState(chain, config)).toEqual({ balance: 10_000n, totalClaimed: 1_000n });
});

it('deploys normally elsewhere, with its own domain (channel ids differ from the canonical escrow’s)', async () => {
  const contracts = await deployBatchSettlement({ rpcUrl: anvil.rpcUrl });
  expect(contracts.escrow).not.toBe(X402_ESCROW);
  const elsewhere: EscrowChain = {
    ...chain,
    contracts,
    domain: batchSettlementDomain(anvil.chainId, contracts.escrow),
  };
  const config = channelConfig(elsewhere);
  expect(await escrowRead(elsewhere, 'getChannelId', [config])).not.toBe(
    await escrowRead(chain, 'getChannelId', [config]),
  );
  await depositInto(elsewhere, config, 5_000n);
  await claimSigned(elsewhere, [await voucherClaim(elsewhere, config, 2_000n)]);
  expect(await channelState(elsewhere, config)).toEqual({ balance: 5_000n, totalClaimed: 2_000n });
  expect(await channelState(chain, config)).toEqual({ balance: 0n, totalClaimed: 0n });
});
