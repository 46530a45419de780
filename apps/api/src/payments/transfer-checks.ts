import { transferProofMessage, USDC_ABI, X402_REASONS } from '@crawlgate/core';
import {
  compactSignatureToSignature,
  isAddressEqual,
  parseCompactSignature,
  parseEventLogs,
  recoverMessageAddress,
  serializeSignature,
  size,
  type Hash,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { hasCode } from '../chain/account-code';
import { hasConfirmationsNow, type ChainContext } from '../chain/chain-context';
import type { Payment } from '../generated/prisma/client';
import type { Gate } from '../gates/gates.service';
import { signedMessageBy } from '../chain/signed-message';
import { chainUnavailable, onChain } from './chain-errors';
import { PaymentRejected, TRANSFER_REASONS } from './payment-rejected';
import { notFoundAsNull } from '../chain/transaction-state';

/** The chain's clock and ours may disagree by a little: a block stamped this much before the gate still counts as after it. */
const CHAIN_CLOCK_SKEW_SECONDS = 30n;

/** A Transfer in the transaction that could pay the gate: exactly its price to its pay_to. */
export interface PayingTransfer {
  payer: `0x${string}`;
  logIndex: number;
}

export interface ProvenTransfer {
  receipt: TransactionReceipt;
  /** Every Transfer of the transaction that could pay the gate, in log order (a relay may carry several payers'). */
  candidates: PayingTransfer[];
  /** Its block's time (chain seconds). */
  minedAt: bigint;
}

export type TransferCheck = { kind: 'proven'; transfer: ProvenTransfer } | { kind: 'pending' };

/**
 * Proof by a USDC transfer the agent sent itself: the receipt succeeded and holds a Transfer of
 * exactly the price to pay_to from our USDC contract, with enough confirmations, mined after
 * the gate was offered (its iat) and before it expired (its exp, by the block's time). Not yet
 * mined or confirmed: pending, and the agent asks again.
 */
export async function checkTransfer(chain: ChainContext, gate: Gate, hash: Hash): Promise<TransferCheck> {
  const receipt = await onChain(() => chain.publicClient.getTransactionReceipt({ hash }).catch(notFoundAsNull));
  if (!receipt) {
    const transaction = await onChain(() => chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull));
    if (transaction) return { kind: 'pending' };
    throw new PaymentRejected(
      TRANSFER_REASONS.transactionNotFound,
      `Transaction ${hash} is not known on ${chain.network.name}`,
    );
  }
  if (receipt.status !== 'success')
    throw new PaymentRejected(TRANSFER_REASONS.transactionFailed, 'The transaction reverted on chain');

  const transfers = parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs, strict: true });
  const usdc = transfers.filter((log) => log.address.toLowerCase() === chain.usdc.toLowerCase());
  if (usdc.length === 0)
    throw new PaymentRejected(
      TRANSFER_REASONS.noUsdcTransfer,
      `The transaction holds no transfer of the gate's asset ${chain.usdc}`,
    );
  const toPayee = usdc.filter((log) => log.args.to.toLowerCase() === gate.payTo.toLowerCase());
  if (toPayee.length === 0)
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_recipient_mismatch,
      `The transaction pays no USDC to the gate's pay_to ${gate.payTo}`,
    );
  // Whoever holds the payout key (a wallet replaced since, lost with its key) would read for gas alone.
  const fromOthers = toPayee.filter((log) => log.args.from.toLowerCase() !== gate.payTo.toLowerCase());
  if (fromOthers.length === 0)
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_recipient_mismatch,
      `The transaction's transfers to the gate's pay_to ${gate.payTo} come from pay_to itself: a transfer to itself pays nothing`,
    );
  const exact = fromOthers.filter((log) => log.args.value === gate.micros);
  if (exact.length === 0)
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_value,
      `The transfer to pay_to is not exactly the gate's ${gate.micros} atomic units`,
    );

  if (!(await onChain(() => hasConfirmationsNow(chain, receipt)))) return { kind: 'pending' };
  const block = await onChain(() => chain.publicClient.getBlock({ blockNumber: receipt.blockNumber }));
  if (block.timestamp + CHAIN_CLOCK_SKEW_SECONDS < BigInt(gate.iat)) {
    throw new PaymentRejected(
      TRANSFER_REASONS.predatesGate,
      'The transfer was mined before this gate was created; it cannot pay for it',
    );
  }
  // Judged by when the transfer was mined, not when its proof arrives: a transfer mined in time and
  // confirmed (or proven, the API down meanwhile) after the gate expired still pays it.
  if (block.timestamp > BigInt(gate.exp) + CHAIN_CLOCK_SKEW_SECONDS) {
    throw new PaymentRejected(
      TRANSFER_REASONS.afterGateExpired,
      'The transfer was mined after this gate expired; it cannot pay for it',
    );
  }
  return {
    kind: 'proven',
    transfer: {
      receipt,
      minedAt: block.timestamp,
      candidates: exact.map((log) => ({
        payer: log.args.from.toLowerCase() as `0x${string}`,
        logIndex: log.logIndex,
      })),
    },
  };
}

const transferLogs = (receipt: Pick<TransactionReceipt, 'logs'>) =>
  parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs, strict: true });

/** Whether a Transfer log moves exactly this: `amount` of `asset` from `payer` to `payTo`. */
function moves(
  log: ReturnType<typeof transferLogs>[number],
  payment: { asset: string; payer: string; payTo: string; amount: bigint },
): boolean {
  return (
    isAddressEqual(log.address, payment.asset as Hex) &&
    isAddressEqual(log.args.from, payment.payer as Hex) &&
    isAddressEqual(log.args.to, payment.payTo as Hex) &&
    log.args.value === payment.amount
  );
}

/** What a recorded payment of a transaction moved, and the log index it was recorded at. */
export type RecordedTransfer = Pick<Payment, 'asset' | 'payer' | 'payTo' | 'amount' | 'transferLogIndex'>;

/**
 * The recorded payments of `receipt`'s transaction by the log index, in the receipt as it is now, of
 * the Transfer each took. A log index is the log's place in its block, and a reorg mining the
 * transaction again behind another moves it. An authorization's payment is where its own nonce was
 * used (`settledBy`: its index, null when not in this receipt, undefined for a payment that is no
 * authorization's); the others by what they moved (asset, payer, pay_to, amount): at their recorded
 * index while the log there moves that and no other payment took it, else at the first such log
 * none took. 'changed' when one is not there (the transaction ran otherwise).
 */
export function transfersTaken<Recorded extends RecordedTransfer>(
  receipt: Pick<TransactionReceipt, 'logs'>,
  recorded: readonly Recorded[],
  settledBy: (payment: Recorded) => number | null | undefined = () => undefined,
): Map<number, Recorded> | 'changed' {
  const transfers = transferLogs(receipt);
  const taken = new Map<number, Recorded>();
  const byMove: Recorded[] = [];
  for (const payment of recorded) {
    const settled = settledBy(payment);
    if (settled === undefined) byMove.push(payment);
    else if (settled === null || taken.has(settled)) return 'changed';
    else taken.set(settled, payment);
  }
  const moved = byMove.filter((payment) => {
    const still = transfers.find(
      (log) => log.logIndex === payment.transferLogIndex && !taken.has(log.logIndex) && moves(log, payment),
    );
    if (still) taken.set(still.logIndex, payment);
    return !still;
  });
  for (const payment of moved) {
    const log = transfers.find((candidate) => !taken.has(candidate.logIndex) && moves(candidate, payment));
    if (!log) return 'changed';
    taken.set(log.logIndex, payment);
  }
  return taken;
}

/**
 * The payment recorded at log `index` whose Transfer is still there (an authorization's: its nonce
 * used there; another's: the log there moves what it moved), if any: one a reorg moved says nothing
 * about whose the log at its old index is now.
 */
export function recordedStillAt<Recorded extends RecordedTransfer>(
  receipt: Pick<TransactionReceipt, 'logs'>,
  recorded: readonly Recorded[],
  index: number,
  settledBy: (payment: Recorded) => number | null | undefined = () => undefined,
): Recorded | undefined {
  const log = transferLogs(receipt).find((candidate) => candidate.logIndex === index);
  return recorded.find((payment) => {
    if (payment.transferLogIndex !== index) return false;
    const settled = settledBy(payment);
    return settled === undefined ? log !== undefined && moves(log, payment) : settled === index;
  });
}

/** The payments of `taken` (transfersTaken) recorded at another log index than their Transfer's now. */
export function movedTransfers<Recorded extends RecordedTransfer & { id: string }>(
  taken: ReadonlyMap<number, Recorded>,
): { id: string; transferLogIndex: number }[] {
  return [...taken]
    .filter(([index, payment]) => payment.transferLogIndex !== index)
    .map(([index, payment]) => ({ id: payment.id, transferLogIndex: index }));
}

/** Payers of one transaction looked at for one proof, at most (each a chain read, a contract's a call). */
const MAX_PAYERS_EXAMINED = 32;

/**
 * Runs one contract payer's signature check (calls into code anyone can deploy), or refuses to:
 * where the caller budgets such calls. It may throw instead of checking.
 */
export type ContractPayerCheck = (
  payer: Hex,
  check: () => Promise<boolean | 'unchecked'>,
) => Promise<boolean | 'unchecked'>;

/**
 * The transfer this proof pays with, or 'used' when the signer's transfers in it all paid gates
 * already: a transaction may carry several payers' transfers to the same pay_to, and each pays the
 * gate its own payer names. The signer of a plain signature (65 or 64 bytes) is recovered here, so
 * no number of payers ahead hides its transfer; contract payers are asked in turn, after it, each
 * through `checkContract`. Of a payer's transfers, those that settle an authorization claimed for
 * another gate (`claimed`, which the reconciler records for that gate) come last.
 */
export async function transferSignedFor(
  chain: ChainContext,
  gateRef: string,
  hash: Hash,
  candidates: readonly PayingTransfer[],
  taken: ReadonlySet<number | null>,
  claimed: ReadonlySet<number>,
  signature: Hex | undefined,
  checkContract: ContractPayerCheck = (_payer, check) => check(),
): Promise<PayingTransfer | 'used'> {
  const open = candidates.filter((candidate) => !taken.has(candidate.logIndex));
  const ranked = [
    ...open.filter((candidate) => !claimed.has(candidate.logIndex)),
    ...open.filter((candidate) => claimed.has(candidate.logIndex)),
  ];
  const signer = await plainSigner(gateRef, hash, signature);
  const isSigner = (payer: string) => signer !== undefined && isAddressEqual(payer as Hex, signer);
  const signers = ranked.find((candidate) => isSigner(candidate.payer));
  if (signers) return signers;
  // A contract wallet's signature (its owner's key, which may have paid beside it) is asked of the wallet.
  // A payer whose check the chain could not answer (anyone's contract can make its own so) does not
  // hold up the next: it makes a 503 only when no payer's check holds.
  const payers = [...new Set(ranked.map((candidate) => candidate.payer))].filter((payer) => !isSigner(payer));
  const message = transferProofMessage(gateRef, hash);
  let unchecked = false;
  if (signature !== undefined) {
    for (const payer of payers.slice(0, MAX_PAYERS_EXAMINED)) {
      if (!(await onChain(() => hasCode(chain.publicClient, payer)))) continue;
      const signed = await checkContract(payer, () => payerSigned(chain, message, payer, signature));
      if (signed === true) return ranked.find((candidate) => candidate.payer === payer)!;
      if (signed === 'unchecked') unchecked = true;
    }
  }
  if (unchecked) throw chainUnavailable();
  if (ranked.length === 0 || candidates.some((candidate) => isSigner(candidate.payer))) return 'used';
  if (signature === undefined) await checkPayerSignature(chain, gateRef, hash, ranked[0].payer, signature); // asks for one
  throw new PaymentRejected(
    TRANSFER_REASONS.notSignedByPayer,
    `\`signature\` is not the proof of any payer of a transfer of the price to pay_to in ${hash}${payers.length > MAX_PAYERS_EXAMINED ? ` (the first ${MAX_PAYERS_EXAMINED} payers were looked at)` : ''}: the transfer's payer signs (EIP-191) ${JSON.stringify(message)}`,
  );
}

/** The signer of a plain (EOA) signature of this proof, 65 bytes or EIP-2098's 64; undefined for anything else. */
async function plainSigner(gateRef: string, hash: Hash, signature: Hex | undefined): Promise<Hex | undefined> {
  const full = signature && expandedSignature(signature);
  if (full === undefined || size(full) !== 65) return undefined;
  return recoverMessageAddress({ message: transferProofMessage(gateRef, hash), signature: full }).catch(
    () => undefined,
  );
}

/** EIP-2098's 64-byte form as the 65 bytes ECDSA checks read; any other signature as it is. */
function expandedSignature(signature: Hex): Hex {
  if (size(signature) !== 64) return signature;
  try {
    return serializeSignature(compactSignatureToSignature(parseCompactSignature(signature)));
  } catch {
    return signature;
  }
}

/**
 * The log index of the first USDC Transfer in `receipt` from the payer to pay_to of exactly the
 * amount, or null: the transfer a `tx_hash` payment claimed before claims recorded it.
 */
export function transferIndexOf(
  chain: Pick<ChainContext, 'usdc'>,
  receipt: Pick<TransactionReceipt, 'logs'>,
  payment: { payer: string; payTo: string; amount: bigint },
): number | null {
  return transferLogs(receipt).find((log) => moves(log, { ...payment, asset: chain.usdc }))?.logIndex ?? null;
}

/**
 * The transfer's payer signed this gate and hash (EIP-191; ERC-1271/6492 for smart wallets), so
 * only the payer can spend its transfer: the hash alone is public on the chain. Checked before
 * anything is recorded, so a refused proof leaves the transfer to its payer.
 */
export async function checkPayerSignature(
  chain: ChainContext,
  gateRef: string,
  hash: Hash,
  payer: `0x${string}`,
  signature: Hex | undefined,
): Promise<void> {
  const message = transferProofMessage(gateRef, hash);
  const asked = `the transfer's payer ${payer} signs (EIP-191) ${JSON.stringify(message)}`;
  if (signature === undefined)
    throw new PaymentRejected(TRANSFER_REASONS.notSignedByPayer, `A tx_hash needs \`signature\`: ${asked}`);
  const signed = await payerSigned(chain, message, payer, signature);
  if (signed === 'unchecked') throw chainUnavailable();
  if (signed) return;
  throw new PaymentRejected(TRANSFER_REASONS.notSignedByPayer, `\`signature\` is not this proof's: ${asked}`);
}

/**
 * Whether `payer` signed `message` with `signature`, read as EIP-2098's 64-byte ECDSA form first
 * (recovered locally, no node asked), then as sent (a contract wallet may take 64 bytes of its own
 * kind, a passkey's r||s). A form the chain could not check is no "no": 'unchecked' only when no
 * form holds.
 */
async function payerSigned(
  chain: Pick<ChainContext, 'publicClient'>,
  message: string,
  payer: Hex,
  signature: Hex,
): Promise<boolean | 'unchecked'> {
  const expanded = expandedSignature(signature);
  let unchecked = false;
  for (const form of expanded === signature ? [signature] : [expanded, signature]) {
    const signed = await signedMessageBy(chain, { address: payer, message, signature: form });
    if (signed === true) return true;
    if (signed === 'unchecked') unchecked = true;
  }
  return unchecked ? 'unchecked' : false;
}
