import { transferProofMessage, USDC_ABI, X402_REASONS } from '@crawlgate/core';
import {
  isAddressEqual,
  parseEventLogs,
  recoverMessageAddress,
  size,
  type Hash,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import type { ChainContext } from '../chain/chain-context';
import type { Gate } from '../gates/gates.service';
import { onChain } from './chain-errors';
import { PaymentRejected, TRANSFER_REASONS } from './payment-rejected';

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
}

export type TransferCheck = { kind: 'proven'; transfer: ProvenTransfer } | { kind: 'pending' };

/**
 * Proof by a USDC transfer the agent sent itself: the receipt succeeded and holds a Transfer of
 * exactly the price to pay_to from our USDC contract, with enough confirmations, mined after
 * the gate was offered (its iat). Not yet mined or confirmed: pending, and the agent asks again.
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
  const exact = toPayee.filter((log) => log.args.value === gate.micros);
  if (exact.length === 0)
    throw new PaymentRejected(
      X402_REASONS.invalid_exact_evm_payload_authorization_value,
      `The transfer to pay_to is not exactly the gate's ${gate.micros} atomic units`,
    );

  const head = await onChain(() => chain.publicClient.getBlockNumber({ cacheTime: 0 }));
  if (head - receipt.blockNumber + 1n < BigInt(chain.confirmations)) return { kind: 'pending' };
  const block = await onChain(() => chain.publicClient.getBlock({ blockNumber: receipt.blockNumber }));
  if (block.timestamp + CHAIN_CLOCK_SKEW_SECONDS < BigInt(gate.iat)) {
    throw new PaymentRejected(
      TRANSFER_REASONS.predatesGate,
      'The transfer was mined before this gate was created; it cannot pay for it',
    );
  }
  return {
    kind: 'proven',
    transfer: {
      receipt,
      candidates: exact.map((log) => ({
        payer: log.args.from.toLowerCase() as `0x${string}`,
        logIndex: log.logIndex,
      })),
    },
  };
}

/** Contract payers whose signature is asked of the chain (ERC-1271) for one proof, at most. */
const MAX_CONTRACT_PAYERS_CHECKED = 16;

/**
 * The first transfer not `taken` (by its log index) whose payer signed this gate and hash
 * (checkPayerSignature), or 'used' when the signer's transfers in it all paid gates already: a
 * transaction may carry several payers' transfers to the same pay_to, and each pays the gate its
 * own payer names. The signer of a plain (EOA) signature is recovered here, so no number of other
 * payers ahead in the transaction hides its transfer; contract payers are asked in turn.
 */
export async function transferSignedFor(
  chain: ChainContext,
  gateRef: string,
  hash: Hash,
  candidates: readonly PayingTransfer[],
  taken: ReadonlySet<number | null>,
  signature: Hex | undefined,
): Promise<PayingTransfer | 'used'> {
  const open = candidates.filter((candidate) => !taken.has(candidate.logIndex));
  if (signature !== undefined && size(signature) === 65) {
    const message = transferProofMessage(gateRef, hash);
    const signer = await recoverMessageAddress({ message, signature }).catch(() => undefined);
    const signers = signer ? candidates.filter((candidate) => isAddressEqual(candidate.payer, signer)) : [];
    if (signers.length > 0) return open.find((candidate) => isAddressEqual(candidate.payer, signer!)) ?? 'used';
  }
  if (open.length === 0) return 'used';
  const payers = [...new Set(open.map((candidate) => candidate.payer))];
  const contracts: `0x${string}`[] = [];
  for (const payer of payers) {
    if (contracts.length === MAX_CONTRACT_PAYERS_CHECKED) break;
    const code = await onChain(() => chain.publicClient.getCode({ address: payer }));
    if (code && code !== '0x') contracts.push(payer);
  }
  for (const payer of contracts) {
    try {
      await checkPayerSignature(chain, gateRef, hash, payer, signature);
      return open.find((candidate) => candidate.payer === payer)!;
    } catch (error) {
      if (!(error instanceof PaymentRejected)) throw error;
    }
  }
  // Refused as the transfer's payer would be: the same reason and detail as a single transfer's.
  await checkPayerSignature(chain, gateRef, hash, open[0].payer, signature);
  return open[0];
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
  const transfers = parseEventLogs({ abi: USDC_ABI, eventName: 'Transfer', logs: receipt.logs, strict: true });
  const paying = transfers.find(
    (log) =>
      log.address.toLowerCase() === chain.usdc.toLowerCase() &&
      log.args.from.toLowerCase() === payment.payer.toLowerCase() &&
      log.args.to.toLowerCase() === payment.payTo.toLowerCase() &&
      log.args.value === payment.amount,
  );
  return paying?.logIndex ?? null;
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
  const valid = await onChain(() =>
    chain.publicClient.verifyMessage({ address: payer, message, signature, mode: 'eoa' }),
  );
  if (!valid)
    throw new PaymentRejected(TRANSFER_REASONS.notSignedByPayer, `\`signature\` is not this proof's: ${asked}`);
}

function notFoundAsNull(error: unknown): null {
  const name = (error as { name?: unknown })?.name;
  if (name === 'TransactionReceiptNotFoundError' || name === 'TransactionNotFoundError') return null;
  throw error;
}
