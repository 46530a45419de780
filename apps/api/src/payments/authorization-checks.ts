import {
  MAX_AUTHORIZATION_SECONDS,
  transferWithAuthorizationTypedData,
  USDC_ABI,
  X402_REASONS,
  type ExactEvmPayload,
  type TransferAuthorization,
} from '@crawlgate/core';
import {
  decodeEventLog,
  getAddress,
  hexToNumber,
  isAddressEqual,
  recoverTypedDataAddress,
  size,
  slice,
  type Hex,
  type Log,
  type TransactionReceipt,
} from 'viem';
import { confirmedBlockNow, firstRecentBlock, type ChainContext } from '../chain/chain-context';
import { eventsInSpans } from '../chain/log-spans';
import { isRevert } from '../chain/revert';
import type { Gate } from '../gates/gates.service';
import { ApiError } from '../http/api-error';
import { chainUnavailable, isChainUnreachable, onChain, revertMessage } from './chain-errors';
import { PaymentRejected } from './payment-rejected';

/** x402 clients sign validBefore = now + maxTimeoutSeconds; settlement needs a few seconds of that. */
const SETTLEMENT_MARGIN_SECONDS = 6n;
/** The agent's clock may run a little ahead of ours: its now + MAX_AUTHORIZATION_SECONDS still passes. */
const AGENT_CLOCK_SKEW_SECONDS = 60n;

export interface SignedAuthorization extends TransferAuthorization {
  signature: Hex;
}

export function toSignedAuthorization(payload: ExactEvmPayload): SignedAuthorization {
  const { authorization: a, signature } = payload;
  return {
    from: getAddress(a.from.toLowerCase()),
    to: getAddress(a.to.toLowerCase()),
    value: BigInt(a.value),
    validAfter: BigInt(a.validAfter),
    validBefore: BigInt(a.validBefore),
    nonce: a.nonce.toLowerCase() as Hex,
    signature,
  };
}

/** The checks that need no chain: scheme, network, recipient, amount and time window. */
export function checkTerms(
  gate: Pick<Gate, 'payTo' | 'micros'>,
  chain: ChainContext,
  scheme: string,
  network: string,
  auth: SignedAuthorization,
  nowSeconds: bigint,
): void {
  if (scheme !== 'exact')
    throw new PaymentRejected(X402_REASONS.invalid_scheme, `Scheme "${scheme}" is not supported; use "exact"`);
  if (network !== chain.network.x402Network && network !== chain.network.caip2) {
    throw new PaymentRejected(
      X402_REASONS.invalid_network,
      `Network "${network}" is not this gate's (${chain.network.x402Network} / ${chain.network.caip2})`,
    );
  }
  if (auth.to.toLowerCase() !== gate.payTo.toLowerCase()) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_recipient_mismatch,
      `The authorization pays ${auth.to}, not the gate's pay_to ${gate.payTo}`,
    );
  }
  // Whoever holds the payout key (a wallet replaced since, lost with its key) would read for gas alone.
  if (auth.from.toLowerCase() === gate.payTo.toLowerCase()) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_recipient_mismatch,
      `The authorization's payer is the gate's pay_to ${gate.payTo}: a transfer to itself pays nothing`,
    );
  }
  if (auth.value !== gate.micros) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_value,
      `The authorization is for ${auth.value} atomic units; the gate costs exactly ${gate.micros}`,
    );
  }
  if (auth.validAfter > nowSeconds) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_valid_after,
      'The authorization is not valid yet (validAfter is in the future)',
    );
  }
  if (auth.validBefore < nowSeconds + SETTLEMENT_MARGIN_SECONDS) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_valid_before,
      'The authorization expires too soon to settle (validBefore must be at least 6 s ahead)',
    );
  }
  // Whoever holds a signed authorization can settle it until validBefore: one valid for ever is a standing debit.
  if (auth.validBefore > nowSeconds + BigInt(MAX_AUTHORIZATION_SECONDS) + AGENT_CLOCK_SKEW_SECONDS) {
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_valid_before,
      `The authorization is valid for too long: validBefore may be at most ${MAX_AUTHORIZATION_SECONDS} s ahead (${AGENT_CLOCK_SKEW_SECONDS} s more for clock skew), since whoever holds it can settle it until then`,
    );
  }
}

/** The EIP-712 TransferWithAuthorization `auth` signs, for our token on this chain. */
function authorizationTypedData(chain: ChainContext, auth: SignedAuthorization) {
  const { signature: _, ...authorization } = auth;
  const domain = {
    name: chain.usdcName,
    version: chain.usdcVersion,
    chainId: chain.chainId,
    verifyingContract: chain.usdc,
  };
  return transferWithAuthorizationTypedData(domain, authorization);
}

/**
 * Whether `from` signed `auth` with its own key (a plain ECDSA signature), recovered locally with no
 * chain call. False says only that the chain must judge it: a smart wallet's (ERC-1271/6492), or junk.
 */
export async function isSignedByFromKey(chain: ChainContext, auth: SignedAuthorization): Promise<boolean> {
  if (size(auth.signature) !== 65) return false;
  const typedData = authorizationTypedData(chain, auth);
  const recovered = await recoverTypedDataAddress({ ...typedData, signature: auth.signature }).catch(() => undefined);
  return recovered === auth.from;
}

/** EIP-712 signature by `from`: recovered locally for EOAs, asked of the wallet (ERC-1271/6492) otherwise. */
export async function checkSignature(chain: ChainContext, auth: SignedAuthorization): Promise<void> {
  if (await isSignedByFromKey(chain, auth)) return;
  const typedData = authorizationTypedData(chain, auth);
  const valid = await onChain(() =>
    chain.publicClient.verifyTypedData({ ...typedData, address: auth.from, signature: auth.signature }),
  );
  if (!valid)
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_signature,
      'The signature is not a valid EIP-3009 authorization by `from` for this token',
    );
}

/** Arguments of transferWithAuthorization: the (v, r, s) overload for 65-byte signatures, `bytes` otherwise. */
export function settlementCall(chain: ChainContext, auth: SignedAuthorization) {
  const base = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce] as const;
  if (size(auth.signature) === 65) {
    // Split, not parsed: the token judges r, s and v (and refuses them with its own reasons).
    const r = slice(auth.signature, 0, 32);
    const s = slice(auth.signature, 32, 64);
    const v = hexToNumber(slice(auth.signature, 64, 65));
    return {
      address: chain.usdc,
      abi: USDC_ABI,
      functionName: 'transferWithAuthorization' as const,
      args: [...base, v < 2 ? v + 27 : v, r, s] as const,
    };
  }
  return {
    address: chain.usdc,
    abi: USDC_ABI,
    functionName: 'transferWithAuthorization' as const,
    args: [...base, auth.signature] as const,
  };
}

const SIMULATION_REASONS: [RegExp, string, string][] = [
  [
    /authorization is used or canceled/i,
    X402_REASONS.invalid_exact_evm_nonce_already_used,
    'This authorization nonce was already used or canceled',
  ],
  [/exceeds balance/i, X402_REASONS.insufficient_funds, 'The payer does not hold enough USDC'],
  [/invalid signature/i, X402_REASONS.invalid_exact_evm_payload_signature, 'The token rejected the signature'],
  [
    /not yet valid/i,
    X402_REASONS.invalid_exact_evm_payload_authorization_valid_after,
    'The authorization is not valid yet',
  ],
  [
    /authorization is expired/i,
    X402_REASONS.invalid_exact_evm_payload_authorization_valid_before,
    'The authorization has expired',
  ],
];

/** Dry-runs the settlement: balance, nonce state and the token's own checks, without spending gas. */
export async function simulateSettlement(chain: ChainContext, auth: SignedAuthorization): Promise<void> {
  try {
    await chain.publicClient.simulateContract({
      ...settlementCall(chain, auth),
      account: chain.relayer.account,
    } as never);
  } catch (error) {
    throw settlementRefusal(error);
  }
}

/**
 * The answer for a settlement a dry run of it failed (its simulation, or its gas estimate, which
 * runs it too): the token's reason, or 503 for a node that was not reached. Nothing was sent.
 */
export function settlementRefusal(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isChainUnreachable(error)) return Object.assign(chainUnavailable(), { cause: error });
  const message = revertMessage(error);
  const known = SIMULATION_REASONS.find(([pattern]) => pattern.test(message));
  if (known) return new PaymentRejected(known[1], known[2]);
  return new PaymentRejected(
    X402_REASONS.invalid_payload,
    `The token refused this authorization: ${message.split(' | ')[0]}`,
  );
}

/**
 * The answer for a settlement whose gas estimate failed when it was to be sent: its refusal only
 * when the node ran it and it reverted (settlementRefusal); any other failure (the relayer's gas
 * money, a node's rate limit or its own error) says nothing of the payment: 503, nothing sent.
 */
export function estimateRefusal(error: unknown): ApiError {
  if (error instanceof ApiError || isRevert(error)) return settlementRefusal(error);
  return Object.assign(
    chainUnavailable('The payment network did not run this settlement’s gas estimate, so it was not sent'),
    { cause: error },
  );
}

/** How far the chain's clock may run behind ours when it stamps a block. */
const CHAIN_CLOCK_MARGIN_SECONDS = 60n;

/**
 * The earliest chain time the API can have accepted an authorization: at most
 * MAX_AUTHORIZATION_SECONDS (and the agent's clock skew) before its validBefore, less a margin for
 * the chain's clock. Its nonce was unused then (the API simulates its transfer before it takes it),
 * so neither its use nor its cancel is in an earlier block. A search for either starts there, not
 * at validAfter, which the payer chooses (0: the chain's first block) and which a cancel ignores.
 */
export function earliestAcceptanceOf(auth: Pick<TransferAuthorization, 'validBefore'>): bigint {
  const accepted =
    auth.validBefore - BigInt(MAX_AUTHORIZATION_SECONDS) - AGENT_CLOCK_SKEW_SECONDS - CHAIN_CLOCK_MARGIN_SECONDS;
  return accepted > 0n ? accepted : 0n;
}

/**
 * The first block up to `head` stamped at or after `timestamp` (`head` + 1 when none is), by binary
 * search: about 25 block reads on a chain of tens of millions of blocks.
 */
export async function firstBlockStampedFrom(chain: ChainContext, timestamp: bigint, head: bigint): Promise<bigint> {
  let low = 0n;
  let high = head + 1n;
  while (low < high) {
    const middle = (low + high) / 2n;
    const block = await chain.publicClient.getBlock({ blockNumber: middle });
    if (block.timestamp >= timestamp) high = middle;
    else low = middle + 1n;
  }
  return low;
}

/**
 * The token's own record: true once (from, nonce) was used by any transaction, ours or not, or
 * canceled; as of `blockNumber` when given, else the latest block.
 */
export function isAuthorizationUsed(
  chain: ChainContext,
  from: `0x${string}`,
  nonce: `0x${string}`,
  blockNumber?: bigint,
): Promise<boolean> {
  return chain.publicClient.readContract({
    address: chain.usdc,
    abi: USDC_ABI,
    functionName: 'authorizationState',
    args: [from, nonce],
    blockNumber,
  });
}

/**
 * What to do with an authorization the chain shows unused as of a block stamped `headTimestamp`.
 * The token takes it only in a block stamped before validBefore, and no block is stamped before
 * the head: once the head reaches validBefore it can never land ('expired'). Before that a
 * broadcast nobody recorded may still be pending, so it is sent again only with the settlement
 * margin left by both clocks ('send'), and otherwise waited for ('wait'). This machine's clock
 * alone never expires it: it may run ahead of the chain's.
 */
export function unusedAuthorizationFate(
  validBefore: bigint,
  headTimestamp: bigint,
  localNowSeconds: bigint,
): 'send' | 'wait' | 'expired' {
  if (validBefore <= headTimestamp) return 'expired';
  const latest = headTimestamp > localNowSeconds ? headTimestamp : localNowSeconds;
  return validBefore >= latest + SETTLEMENT_MARGIN_SECONDS ? 'send' : 'wait';
}

/**
 * What became of an authorization: still 'unused', 'used' by a transfer (ours or a copy: the payer
 * paid), or 'canceled' by its authorizer (cancelAuthorization: nothing was charged, ever). The
 * token's state says used-or-canceled alike; its AuthorizationCanceled event tells them apart, once
 * its block has the chain's confirmations: a cancel a reorg may still undo (the fork where it beat
 * our settlement) would release a claim that paid. Until then it reads as 'used' (the payer paid,
 * or may have), which callers wait on. `blockNumber`, a block with those confirmations: the state
 * and the cancels as of it, not of the newest such block.
 */
export async function authorizationOutcome(
  chain: ChainContext,
  from: `0x${string}`,
  nonce: `0x${string}`,
  blockNumber?: bigint,
): Promise<'unused' | 'used' | 'canceled'> {
  if (!(await isAuthorizationUsed(chain, from, nonce, blockNumber))) return 'unused';
  const confirmedHead = blockNumber ?? (await confirmedBlockNow(chain));
  return (await isCanceledWithin(chain, from, nonce, firstRecentBlock(chain, confirmedHead), confirmedHead))
    ? 'canceled'
    : 'used';
}

/** Whether the token's AuthorizationCanceled(from, nonce) is in a block of [fromBlock, toBlock]. */
export async function isCanceledWithin(
  chain: ChainContext,
  from: `0x${string}`,
  nonce: `0x${string}`,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<boolean> {
  const canceled = await eventsInSpans(chain.logSpan, fromBlock, toBlock, (spanFrom, spanTo) =>
    chain.publicClient.getContractEvents({
      address: chain.usdc,
      abi: USDC_ABI,
      eventName: 'AuthorizationCanceled',
      args: { authorizer: from, nonce },
      fromBlock: spanFrom,
      toBlock: spanTo,
    }),
  );
  // The token's own and still on the chain: what the node's filter should have left alone already.
  return canceled.some((log) => isAddressEqual(log.address, chain.usdc) && !log.removed);
}

/**
 * The log index of this very authorization's Transfer in `receipt`, or null when `receipt` did not
 * settle it: the token's AuthorizationUsed(from, nonce) and, next, its Transfer(from, to, value),
 * as the token emits them for one transferWithAuthorization (Circle's FiatToken and our test token
 * alike). The payer chooses EIP-3009 nonces, so another authorization of its own with the same
 * nonce (paying itself, or nothing) uses the nonce too: that transaction paid no gate, and the
 * authorization it spent can never settle.
 */
export function settledTransferIndex(
  chain: Pick<ChainContext, 'usdc'>,
  receipt: Pick<TransactionReceipt, 'status' | 'logs'>,
  auth: Pick<TransferAuthorization, 'from' | 'to' | 'value' | 'nonce'>,
): number | null {
  if (receipt.status !== 'success') return null;
  const logs = receipt.logs;
  for (let i = 0; i + 1 < logs.length; i++) {
    const used = tokenEvent(chain, logs[i]);
    if (
      used?.eventName !== 'AuthorizationUsed' ||
      !isAddressEqual(used.args.authorizer, auth.from) ||
      used.args.nonce.toLowerCase() !== auth.nonce.toLowerCase()
    )
      continue;
    const transfer = tokenEvent(chain, logs[i + 1]);
    const settles =
      transfer?.eventName === 'Transfer' &&
      isAddressEqual(transfer.args.from, auth.from) &&
      isAddressEqual(transfer.args.to, auth.to) &&
      transfer.args.value === auth.value;
    return settles ? logs[i + 1].logIndex : null;
  }
  return null;
}

/**
 * Whether `receipt` is of a transaction that succeeded and used `auth`'s nonce: the token's
 * AuthorizationUsed(from, nonce) among its logs. A reverted one used nothing, whatever a log search said.
 */
export function usedNonceIn(
  chain: Pick<ChainContext, 'usdc'>,
  receipt: Pick<TransactionReceipt, 'status' | 'logs'>,
  auth: Pick<TransferAuthorization, 'from' | 'nonce'>,
): boolean {
  return (
    receipt.status === 'success' &&
    authorizationsUsedIn(chain, receipt).some(
      (used) => isAddressEqual(used.authorizer, auth.from) && used.nonce.toLowerCase() === auth.nonce.toLowerCase(),
    )
  );
}

/** Every EIP-3009 authorization the token says `receipt` used: its (authorizer, nonce). */
export function authorizationsUsedIn(
  chain: Pick<ChainContext, 'usdc'>,
  receipt: Pick<TransactionReceipt, 'logs'>,
): { authorizer: Hex; nonce: Hex }[] {
  return receipt.logs.flatMap((log) => {
    const event = tokenEvent(chain, log);
    return event?.eventName === 'AuthorizationUsed'
      ? [{ authorizer: event.args.authorizer, nonce: event.args.nonce }]
      : [];
  });
}

/** A log of our token decoded, or undefined for any other contract's or an event the ABI does not name. */
function tokenEvent(chain: Pick<ChainContext, 'usdc'>, log: Pick<Log, 'address' | 'data' | 'topics'>) {
  if (!isAddressEqual(log.address, chain.usdc)) return undefined;
  try {
    return decodeEventLog({ abi: USDC_ABI, data: log.data, topics: log.topics, strict: true });
  } catch {
    return undefined;
  }
}
