import { toClientEvmSigner } from '@x402/evm';
import {
  InMemoryClientChannelStorage,
  buildChannelConfig,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  readChannelBalanceAndTotalClaimed,
  recoverChannel,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import type { PaymentRequirements } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { DEV_ROLES } from './accounts';
import { erc3009CollectorData, type ChannelConfig, type VoucherClaim } from './batch-settlement-typed-data';
import {
  balanceOf,
  channelState,
  claimSigned,
  escrowRead,
  escrowWrite,
  mint,
  randomSalt,
  receiverAuthorizer,
  startEscrowChain,
  USDC,
  type EscrowChain,
} from './batch-settlement-test-kit';

// The unmodified @x402/evm 2.27 batch-settlement client signs a deposit and vouchers exactly as it
// would for a server; our escrow, placed at x402's address on anvil, accepts them unchanged.

const { relayer, agents } = DEV_ROLES;
const agent = agents[0];

/** The part of the client's `deposit` payload a facilitator turns into `deposit(...)`. */
interface X402DepositPayload {
  voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
  deposit: {
    amount: string;
    authorization: { erc3009Authorization: { validAfter: string; validBefore: string; salt: Hex; signature: Hex } };
  };
}

/** A claim row from a voucher the client signed. */
const rowOf = (
  config: ChannelConfig,
  voucher: { maxClaimableAmount: string; signature: Hex },
  totalClaimed: bigint,
): VoucherClaim => ({
  voucher: { channel: config, maxClaimableAmount: BigInt(voucher.maxClaimableAmount) },
  signature: voucher.signature,
  totalClaimed,
});

let chain: EscrowChain;
let requirements: PaymentRequirements;
const receiver = privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  chain = await startEscrowChain();
  await mint(chain, agent.address, 10n * USDC);
  requirements = {
    scheme: 'batch-settlement',
    network: `eip155:${chain.anvil.chainId}`,
    amount: '1000',
    asset: chain.usdc,
    payTo: receiver,
    maxTimeoutSeconds: 3600,
    extra: { receiverAuthorizer: receiverAuthorizer.address, withdrawDelay: 900, name: 'USD Coin', version: '2' },
  };
});
afterAll(() => chain?.anvil.stop());

it('accepts the x402 client’s deposit and vouchers, and the client reads the channel back', async () => {
  const signer = toClientEvmSigner(agent.account, chain.client);
  const deps = { signer, storage: new InMemoryClientChannelStorage(), salt: randomSalt() };
  const config = buildChannelConfig(deps, requirements) as ChannelConfig;
  const channelId = computeChannelId(config, requirements.network);
  expect(await escrowRead(chain, 'getChannelId', [config])).toBe(channelId);

  // First page: deposit 0.1 USDC and the first voucher in one payload, as the client sends it.
  const { payload } = await createBatchSettlementEIP3009DepositPayload(
    signer,
    2,
    requirements,
    config,
    '100000',
    '1000',
  );
  const deposit = payload as unknown as X402DepositPayload;
  const auth = deposit.deposit.authorization.erc3009Authorization;
  const collectorData = erc3009CollectorData({
    validAfter: BigInt(auth.validAfter),
    validBefore: BigInt(auth.validBefore),
    salt: BigInt(auth.salt),
    signature: auth.signature,
  });
  await escrowWrite(chain, relayer, 'deposit', [
    config,
    BigInt(deposit.deposit.amount),
    chain.contracts.collector,
    collectorData,
  ]);
  expect(await readChannelBalanceAndTotalClaimed(signer, channelId)).toEqual([100_000n, 0n]);

  // The voucher inside the deposit payload is claimable...
  await claimSigned(chain, [rowOf(config, deposit.voucher, 1_000n)]);
  expect(await channelState(chain, config)).toEqual({ balance: 100_000n, totalClaimed: 1_000n });

  // ...and so are pages 2..5, the client's own cumulative vouchers: the receiver claims the last one.
  let last = deposit.voucher;
  for (let page = 2; page <= 5; page++)
    last = await signVoucher(signer, channelId, String(page * 1000), requirements.network);
  await claimSigned(chain, [rowOf(config, last, 5_000n)]);
  expect(await channelState(chain, config)).toEqual({ balance: 100_000n, totalClaimed: 5_000n });

  await escrowWrite(chain, relayer, 'settle', [receiver, chain.usdc]);
  expect(await balanceOf(chain, receiver)).toBe(5_000n);

  // A client that lost its state recovers it from our contract's `channels` read.
  const recovered = await recoverChannel({ ...deps, storage: new InMemoryClientChannelStorage() }, requirements);
  expect(recovered).toEqual({ chargedCumulativeAmount: '5000', balance: '100000', totalClaimed: '5000' });
});
