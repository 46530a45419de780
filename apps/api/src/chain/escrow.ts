import {
  BATCH_SETTLEMENT_ABI,
  batchSettlementDomain,
  USDC_ABI,
  CLAIM_BATCH_TYPES,
  REFUND_TYPES,
  type BatchVoucher,
  type ChannelConfig,
  type Erc3009DepositAuthorization,
} from '@crawlgate/core';
import {
  decodeFunctionData,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeFunctionData,
  isAddressEqual,
  keccak256,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { confirmedBlockNow, firstRecentBlock, type BatchSettlementChain, type ChainContext } from './chain-context';
import { eventsInSpans } from './log-spans';
import { channelIdIn, voucherDigest } from './escrow-hashes';
import { recoverableSignature, type SignerKeys } from './signer-keys';

/*
 * The batch-settlement escrow as the API uses it: channel ids, the payer's voucher signature
 * (checked as strictly as the contract checks it, so nothing accepted here fails at claim time),
 * channel state, and the calldata of deposits, claims, settlements and refunds. Reads and encodings only;
 * sending is the relayer's (payments/settlement.ts).
 */

/** Half the secp256k1 order: a signature with a larger `s` has a twin and the escrow refuses it. */
const HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export interface OnChainChannel {
  balance: bigint;
  totalClaimed: bigint;
  /** A pending timed withdrawal: its amount and when it started (unix seconds); null when none. */
  withdrawal: { amount: bigint; initiatedAt: number } | null;
  refundNonce: bigint;
}

export function escrowDomain(chain: ChainContext, batch: BatchSettlementChain) {
  return batchSettlementDomain(chain.chainId, batch.escrow);
}

export function channelIdOf(chain: ChainContext, batch: BatchSettlementChain, config: ChannelConfig): Hex {
  return channelIdIn(escrowDomain(chain, batch), config);
}

/**
 * Whether `signer` signed the voucher as strictly as the escrow's `_recover` checks it: 65 bytes,
 * low `s`, v of 27 or 28. A high-s twin of a valid signature is refused.
 */
export async function voucherSignedBy(
  chain: ChainContext,
  batch: BatchSettlementChain,
  voucher: BatchVoucher,
  signer: Address,
  keys: SignerKeys,
): Promise<boolean> {
  const parts = recoverableSignature(voucher.signature);
  if (!parts || parts.s > HALF_CURVE_ORDER) return false;
  return keys.signedBy(voucherDigest(escrowDomain(chain, batch), voucher), voucher.signature, signer);
}

/** The channel as the chain has it at `blockNumber` (the latest block when none). */
export async function readChannel(
  chain: ChainContext,
  batch: BatchSettlementChain,
  channelId: Hex,
  blockNumber?: bigint,
): Promise<OnChainChannel> {
  // One eth_call of the escrow's own multicall: the three reads come from one block, never a mix of
  // two (a balance from before a refund with the refund nonce from after it), and cost one RPC call.
  const reads = ['channels', 'pendingWithdrawals', 'refundNonce'] as const;
  const { data } = await chain.publicClient.call({
    to: batch.escrow,
    data: encodeFunctionData({
      abi: BATCH_SETTLEMENT_ABI,
      functionName: 'multicall',
      args: [
        reads.map((functionName) => encodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, functionName, args: [channelId] })),
      ],
    }),
    blockNumber,
  });
  const results = decodeFunctionResult({ abi: BATCH_SETTLEMENT_ABI, functionName: 'multicall', data: data ?? '0x' });
  const result = <T>(i: number) =>
    decodeFunctionResult({ abi: BATCH_SETTLEMENT_ABI, functionName: reads[i], data: results[i] }) as T;
  const [balance, totalClaimed] = result<readonly [bigint, bigint]>(0);
  const [amount, initiatedAt] = result<readonly [bigint, number]>(1);
  const refundNonce = result<bigint>(2);
  return {
    balance,
    totalClaimed,
    withdrawal: Number(initiatedAt) === 0 ? null : { amount, initiatedAt: Number(initiatedAt) },
    refundNonce,
  };
}

/**
 * The channel as a voucher is judged against: its balance as of the block with the configured
 * confirmations (a deposit a reorg can still take back pays no page), what may leave it or has
 * moved it as of the latest block. Each field is the stricter of the two blocks': the smaller
 * balance, the larger claimed total and pending withdrawal, the newer refund nonce. With one
 * confirmation the latest block is the confirmed one: a single eth_call.
 */
export async function readConfirmedChannel(
  chain: ChainContext,
  batch: BatchSettlementChain,
  channelId: Hex,
): Promise<OnChainChannel> {
  const { confirmed, latest } = await readChannelAtBothDepths(chain, batch, channelId);
  return stricterChannel(confirmed, latest);
}

/**
 * The channel as of the block with the configured confirmations only: what a reorg can no longer
 * take back (readConfirmedChannel takes each field's stricter value at that block and the latest).
 */
export async function readChannelAtConfirmedDepth(
  chain: ChainContext,
  batch: BatchSettlementChain,
  channelId: Hex,
): Promise<OnChainChannel> {
  if (chain.confirmations <= 1) return readChannel(chain, batch, channelId);
  return readChannel(chain, batch, channelId, await confirmedBlockNow(chain));
}

/**
 * The channel as of the latest block and as of the block with the configured confirmations (what
 * a reorg can no longer take back). With one confirmation they are the same block: a single eth_call.
 */
export async function readChannelAtBothDepths(
  chain: ChainContext,
  batch: BatchSettlementChain,
  channelId: Hex,
): Promise<{ confirmed: OnChainChannel; latest: OnChainChannel }> {
  if (chain.confirmations <= 1) {
    const state = await readChannel(chain, batch, channelId);
    return { confirmed: state, latest: state };
  }
  const confirmedAt = await confirmedBlockNow(chain);
  // Both calls start in the same tick: the batching transport sends them in one request.
  const [confirmed, latest] = await Promise.all([
    readChannel(chain, batch, channelId, confirmedAt),
    readChannel(chain, batch, channelId),
  ]);
  return { confirmed, latest };
}

/** Of two reads of one channel, what takes the fewest vouchers: the least to spend, the most already gone. */
export function stricterChannel(confirmed: OnChainChannel, latest: OnChainChannel): OnChainChannel {
  const larger = (a: bigint, b: bigint) => (a > b ? a : b);
  const withdrawal =
    (confirmed.withdrawal?.amount ?? 0n) > (latest.withdrawal?.amount ?? 0n) ? confirmed.withdrawal : latest.withdrawal;
  return {
    balance: confirmed.balance < latest.balance ? confirmed.balance : latest.balance,
    totalClaimed: larger(confirmed.totalClaimed, latest.totalClaimed),
    withdrawal,
    refundNonce: larger(confirmed.refundNonce, latest.refundNonce),
  };
}

/** The EIP-3009 nonce of a deposit authorization: bound to one channel (the collector checks it). */
export function depositNonce(channelId: Hex, salt: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, salt]));
}

/** `deposit(config, amount, collector, collectorData)` through the EIP-3009 collector. */
export function depositCalldata(
  batch: BatchSettlementChain,
  config: ChannelConfig,
  amount: bigint,
  authorization: Erc3009DepositAuthorization,
): Hex {
  const collectorData = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [authorization.validAfter, authorization.validBefore, authorization.salt, authorization.signature],
  );
  return encodeFunctionData({
    abi: BATCH_SETTLEMENT_ABI,
    functionName: 'deposit',
    args: [config, amount, batch.collector, collectorData],
  });
}

export interface ClaimRow {
  config: ChannelConfig;
  /** The voucher's signed ceiling and its signature. */
  maxClaimableAmount: bigint;
  signature: Hex;
  /** The cumulative total to record. */
  totalClaimed: bigint;
}

/** `claimWithSignature(rows, sig)`, signed by the receiver authorizer over the whole batch. */
export async function claimCalldata(
  chain: ChainContext,
  batch: BatchSettlementChain,
  rows: readonly ClaimRow[],
): Promise<Hex> {
  const signature = await batch.authorizer.signTypedData({
    domain: escrowDomain(chain, batch),
    types: CLAIM_BATCH_TYPES,
    primaryType: 'ClaimBatch',
    message: {
      claims: rows.map((row) => ({
        channelId: channelIdOf(chain, batch, row.config),
        maxClaimableAmount: row.maxClaimableAmount,
        totalClaimed: row.totalClaimed,
      })),
    },
  });
  const claims = rows.map((row) => ({
    voucher: { channel: row.config, maxClaimableAmount: row.maxClaimableAmount },
    signature: row.signature,
    totalClaimed: row.totalClaimed,
  }));
  return encodeFunctionData({
    abi: BATCH_SETTLEMENT_ABI,
    functionName: 'claimWithSignature',
    args: [claims, signature],
  });
}

/** A claimWithSignature's claims, as its calldata carries them. */
export type ClaimsInCalldata = Extract<
  ReturnType<typeof decodeFunctionData<typeof BATCH_SETTLEMENT_ABI>>,
  { functionName: 'claimWithSignature' }
>['args'][0];

/**
 * The claims a transaction's calldata carries when it is a claimWithSignature of the escrow; none
 * for any other call, one this ABI cannot read included (a transaction of another kind is no claim:
 * it must not fail the run judging it).
 */
export function claimsIn(input: Hex): ClaimsInCalldata {
  try {
    const call = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: input });
    return call.functionName === 'claimWithSignature' ? call.args[0] : [];
  } catch {
    return [];
  }
}

export function settleCalldata(receiver: Address, token: Address): Hex {
  return encodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, functionName: 'settle', args: [receiver, token] });
}

/** What the escrow holds claimed and not yet settled for a receiver and token. */
export async function unsettled(
  chain: ChainContext,
  batch: BatchSettlementChain,
  receiver: Address,
  token: Address,
): Promise<bigint> {
  const [claimed, settled] = (await chain.publicClient.readContract({
    address: batch.escrow,
    abi: BATCH_SETTLEMENT_ABI,
    functionName: 'receivers',
    args: [receiver, token],
  })) as readonly [bigint, bigint];
  return claimed - settled;
}

/** `refundWithSignature(config, amount, nonce, sig)`, signed by the receiver authorizer for the channel's current refund nonce. */
export async function refundCalldata(
  chain: ChainContext,
  batch: BatchSettlementChain,
  config: ChannelConfig,
  amount: bigint,
  nonce: bigint,
): Promise<Hex> {
  const channelId = channelIdOf(chain, batch, config);
  const signature = await batch.authorizer.signTypedData({
    domain: escrowDomain(chain, batch),
    types: REFUND_TYPES,
    primaryType: 'Refund',
    message: { channelId, nonce, amount },
  });
  return encodeFunctionData({
    abi: BATCH_SETTLEMENT_ABI,
    functionName: 'refundWithSignature',
    args: [config, amount, nonce, signature],
  });
}

/**
 * `refund(config, amount)` as the receiver authorizer would send it itself: no signature. The API
 * simulates and estimates a refund with it, so a node sees no refund signature before one is sent.
 */
export function directRefundCalldata(config: ChannelConfig, amount: bigint): Hex {
  return encodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, functionName: 'refund', args: [config, amount] });
}

/** Several escrow calls in one transaction, all or none. */
export function multicallCalldata(calls: readonly Hex[]): Hex {
  return encodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, functionName: 'multicall', args: [calls] });
}

/**
 * What spent the payer's deposit authorization `nonce`, as the token's events in the recent blocks up
 * to `toBlock` show: 'deposited' when the transaction of its AuthorizationUsed(payer, nonce) deposited
 * `amount` (when known) into `channelId` (a copy of one we sent: the escrow's deposit is anyone's to
 * call); 'spent-otherwise' when it was cancelled, or used by a transaction that made no such deposit
 * (a transfer of the payer's own with that nonce): the payer burned it, and a relayed deposit of it
 * reverted at our gas; 'unknown' when no event of it is found (outside the window, a node's gap).
 */
export async function authorizationSpentBy(
  chain: ChainContext,
  batch: BatchSettlementChain,
  { payer, nonce, channelId, amount }: { payer: Address; nonce: Hex; channelId: Hex; amount?: bigint },
  toBlock: bigint,
): Promise<'deposited' | 'spent-otherwise' | 'unknown'> {
  const events = (eventName: 'AuthorizationUsed' | 'AuthorizationCanceled') =>
    eventsInSpans(chain.logSpan, firstRecentBlock(chain, toBlock), toBlock, (fromBlock, spanTo) =>
      chain.publicClient.getContractEvents({
        address: chain.usdc,
        abi: USDC_ABI,
        eventName,
        args: { authorizer: payer, nonce },
        fromBlock,
        toBlock: spanTo,
      }),
    ).then((logs) => logs.filter((log) => !log.removed && isAddressEqual(log.address, chain.usdc)));
  if ((await events('AuthorizationCanceled')).length > 0) return 'spent-otherwise';
  const used = await events('AuthorizationUsed');
  if (used.length === 0) return 'unknown';
  for (const log of used) {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: log.transactionHash });
    const deposits = parseEventLogs({ abi: BATCH_SETTLEMENT_ABI, eventName: 'Deposited', logs: receipt.logs });
    const intoChannel = deposits.some(
      (event) =>
        isAddressEqual(event.address, batch.escrow) &&
        event.args.channelId.toLowerCase() === channelId.toLowerCase() &&
        (amount === undefined || event.args.amount === amount),
    );
    if (receipt.status === 'success' && intoChannel) return 'deposited';
  }
  return 'spent-otherwise';
}

/**
 * Whether block `blockNumber` is stamped at or past `validBefore`: an authorization mined there was
 * refused by the token for its age (a relayed transaction stuck behind fees), not by its payer.
 */
export async function minedPastValidity(chain: ChainContext, blockNumber: bigint, validBefore: Date): Promise<boolean> {
  const { timestamp } = await chain.publicClient.getBlock({ blockNumber });
  return timestamp * 1000n >= BigInt(validBefore.getTime());
}

/** What the escrow's Refunded event of this channel in `receipt` returned to the payer; 0 when none. */
export function refundedIn(receipt: TransactionReceipt, batch: BatchSettlementChain, channelId: Hex): bigint {
  const events = parseEventLogs({ abi: BATCH_SETTLEMENT_ABI, eventName: 'Refunded', logs: receipt.logs });
  return events
    .filter((event) => isAddressEqual(event.address, batch.escrow) && event.args.channelId.toLowerCase() === channelId)
    .reduce((sum, event) => sum + event.args.amount, 0n);
}
