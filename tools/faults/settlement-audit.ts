import { readGate, USDC_ABI } from '@crawlgate/core';
import type { ChainContext } from '../../apps/api/src/chain/chain-context';
import type { Database } from '../../apps/api/src/db/database';
import { transfersTo, usdcBalance } from '../../apps/api/test/test-agent';

/** One settlement the driver attempted, and what the API answered in the end. */
export interface Attempt {
  gateId: string;
  payer: `0x${string}`;
  nonce: `0x${string}`;
  /** From the 200; undefined when the driver never got one. */
  txHash?: string;
}

export interface AuditInput {
  chain: ChainContext;
  db: Database;
  siteIds: string[];
  payTo: `0x${string}`;
  amount: bigint;
  balancesBefore: Map<`0x${string}`, bigint>;
  attempts: Attempt[];
}

/** Problems by the proof (payer/nonce) or gate they concern, so one fault counts once. */
export interface AuditReport {
  /** Money moved that no paid gate records, or a proof that never got its 200. */
  lost: Map<string, string>;
  /** A proof, gate or agent charged more than once. */
  doubled: Map<string, string>;
  /** A gate paid without its transfer on chain. */
  phantom: Map<string, string>;
}

/**
 * Compares the chain (Transfer and AuthorizationUsed events, balances), the ground truth of what
 * was charged, with the database the API left (payments: gates have no rows) and with what the agents were told.
 */
export async function auditSettlements(input: AuditInput): Promise<AuditReport> {
  const { chain, db, amount } = input;
  const report: AuditReport = { lost: new Map(), doubled: new Map(), phantom: new Map() };
  const flag = (kind: keyof AuditReport, key: string, message: string) =>
    report[kind].has(key) || report[kind].set(key, message);
  const proof = (payer: string, nonce: string) => `${payer.toLowerCase()}/${nonce.toLowerCase()}`;

  const transfers = await transfersTo({ chain }, input.payTo);
  const authorizations = await chain.publicClient.getContractEvents({
    address: chain.usdc,
    abi: USDC_ABI,
    eventName: 'AuthorizationUsed',
    fromBlock: 0n,
  });
  const proofByTx = new Map(
    authorizations.map((log) => [log.transactionHash.toLowerCase(), proof(log.args.authorizer!, log.args.nonce!)]),
  );
  const payments = await db.prisma.payment.findMany({ where: { siteId: { in: input.siteIds } } });
  const confirmed = payments.filter((p) => p.status === 'confirmed');

  // Every transfer on chain is exactly one paid gate, recorded with its proof.
  const charged = new Map<string, number>();
  for (const transfer of transfers) {
    const hash = transfer.hash.toLowerCase();
    const key = proofByTx.get(hash) ?? hash;
    charged.set(key, (charged.get(key) ?? 0) + 1);
    if (transfer.value !== amount)
      flag('doubled', key, `transfer ${hash} moved ${transfer.value}, not the price ${amount}`);
    const recorded = confirmed.filter((p) => p.txHash === hash);
    if (recorded.length === 0) flag('lost', key, `transfer ${hash} from ${transfer.from} pays no gate`);
    if (recorded.length > 1) flag('phantom', key, `transfer ${hash} is recorded for ${recorded.length} gates`);
    for (const p of recorded) {
      if (proof(p.payer, p.nonce ?? '') !== key)
        flag('phantom', key, `transfer ${hash} is recorded under another proof than the one it used`);
    }
  }
  for (const [key, count] of charged) if (count > 1) flag('doubled', key, `proof ${key} was charged ${count} times`);

  // No gate is paid without its transfer, nor twice; nothing is left half-settled.
  const transferHashes = new Set(transfers.map((t) => t.hash.toLowerCase()));
  for (const gateRef of new Set(confirmed.map((p) => p.gateId))) {
    const paidWith = confirmed.filter((p) => p.gateId === gateRef);
    if (paidWith.length > 1) flag('doubled', gateRef, `gate ${gateRef} has ${paidWith.length} confirmed payments`);
    for (const p of paidWith)
      if (!transferHashes.has(p.txHash!))
        flag('phantom', gateRef, `gate ${gateRef} is paid by ${p.txHash}, no transfer to pay_to`);
  }
  for (const p of payments.filter((p) => p.status !== 'confirmed'))
    flag('lost', proof(p.payer, p.nonce ?? p.id), `payment for gate ${p.gateId} left ${p.status}`);

  // Every agent was answered 200 with the transfer that is recorded for its gate.
  for (const attempt of input.attempts) {
    const key = proof(attempt.payer, attempt.nonce);
    const ref = readGate(attempt.gateId)?.ref;
    const row = confirmed.find((p) => p.gateId === ref);
    if (!attempt.txHash)
      flag(
        'lost',
        key,
        `the verify of gate ${ref} never answered 200 (payment ${payments.find((p) => p.gateId === ref)?.status ?? 'none'})`,
      );
    else if (row?.txHash !== attempt.txHash.toLowerCase())
      flag('phantom', key, `gate ${attempt.gateId} answered ${attempt.txHash} but records ${row?.txHash}`);
  }

  // Each agent's balance dropped by exactly the price of its paid gates (a gap no proof above explains is flagged here).
  for (const [agent, before] of input.balancesBefore) {
    const paidGates = confirmed.filter((p) => p.payer === agent.toLowerCase()).length;
    const spent = before - (await usdcBalance({ chain }, agent));
    const explained = [...report.lost.keys(), ...report.doubled.keys()].some((key) =>
      key.startsWith(`${agent.toLowerCase()}/`),
    );
    if (spent !== amount * BigInt(paidGates) && !explained) {
      flag(
        spent > amount * BigInt(paidGates) ? 'doubled' : 'phantom',
        agent,
        `agent ${agent} spent ${spent} for ${paidGates} paid gates of ${amount}`,
      );
    }
  }
  return report;
}
