import { batchSettlementDomain, CHANNEL_CONFIG_TYPES, type ChannelConfig, type Hex } from '@crawlgate/core';
import { hashTypedData, isAddressEqual, isHash } from 'viem';
import type { Channel } from './channels';
import { holdLock, readJsonFile, realFilePath, writeJsonAtomically } from './locked-file';

/*
 * An agent's batch-settlement channels kept in a JSON file (batchSettlement.channelFile), so that a
 * restarted agent pays on the channels it opened, with the deposits already in them, and can
 * withdraw from them. One process at a time: the file's lock is held while the agent's process
 * runs, and taken over from a holder of this host that died. The agent writes the file before
 * each deposit or voucher leaves it (what it sent is never less than what the file says) and
 * after each answer.
 */

export interface ChannelFile {
  /** The channels the file held when opened. */
  channels: Channel[];
  /** Throws once released: nothing is sent that the file could not record. */
  save(channels: Channel[]): void;
  /** Lets another agent open the file (also done when this process exits). */
  release(): void;
}

interface StoredChannelJson {
  origin: string;
  channel_id: Hex;
  config: ChannelConfig;
  domain: Channel['domain'];
  deposited: string;
  charged: string;
  signed: string;
  /** Absent in files written before it: then the highest voucher sent, if above what was charged. */
  unanswered?: string[];
  withdrawing: boolean;
  /** Absent in files written before refunds. */
  refund_txs?: Hex[];
}

interface StoredFile {
  version: 1;
  payer: Hex;
  channels: StoredChannelJson[];
}

/**
 * Opens `path` for `payer`'s channels in the escrows the agent allows (lower case); throws when
 * another running process holds it or it is not such a file.
 */
export function openChannelFile(givenPath: string, payer: Hex, escrows: ReadonlySet<string>): ChannelFile {
  // One lock for every spelling of the file (a symbolic link to its folder): each took its own, and
  // two agents of one process, or two processes, each wrote its own channels over the other's.
  const path = realFilePath(givenPath, 'channel file');
  const release = holdLock(
    `${path}.lock`,
    `The channel file ${path} is used by another running agent (${path}.lock); one process at a time`,
  );
  try {
    const channels = readChannels(path, payer, escrows);
    let released = false;
    return {
      channels,
      save: (list) => {
        if (released)
          throw new Error(`The channel file ${path} was released (agent.close()); not paying with its channels`);
        writeJsonAtomically(path, {
          version: 1,
          payer,
          channels: list.map((c) => ({
            origin: c.origin,
            channel_id: c.channelId,
            config: c.config,
            domain: c.domain,
            deposited: c.deposited.toString(),
            charged: c.charged.toString(),
            signed: c.signed.toString(),
            unanswered: c.unanswered.map(String),
            withdrawing: c.withdrawing,
            refund_txs: c.refundTxs,
          })),
        } satisfies StoredFile);
      },
      release: () => {
        released = true;
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * A file that is not ours (another payer's, a channel whose id is not its config's, an escrow the
 * agent does not allow, numbers no run of the agent writes) is refused rather than trusted or
 * emptied: the agent signs vouchers for these channels, and a file it could not read is not an
 * agent without channels.
 */
function readChannels(path: string, payer: Hex, escrows: ReadonlySet<string>): Channel[] {
  const parsed = readJsonFile(path) as StoredFile | undefined;
  if (parsed === undefined) return [];
  const refuse = (why: string) => new Error(`${path} is not a channel file of ${payer}: ${why}`);
  if (parsed?.version !== 1 || !Array.isArray(parsed.channels) || typeof parsed.payer !== 'string')
    throw refuse('unknown format');
  if (!isAddressEqual(parsed.payer, payer)) throw refuse(`it holds ${parsed.payer}'s channels`);
  const seen = new Set<string>();
  return parsed.channels.map((stored) => {
    const isAmount = (a: unknown) => typeof a === 'string' && /^\d{1,78}$/.test(a);
    if (![stored.deposited, stored.charged, stored.signed].every(isAmount)) throw refuse('an amount is not an integer');
    const unanswered = stored.unanswered ?? (BigInt(stored.signed) > BigInt(stored.charged) ? [stored.signed] : []);
    if (!Array.isArray(unanswered) || !unanswered.every(isAmount)) throw refuse('an amount is not an integer');
    // What the site confirmed never exceeds the deposits: the agent signs no voucher above them.
    if (BigInt(stored.charged) > BigInt(stored.deposited))
      throw refuse(`channel ${stored.channel_id} is charged above its deposits`);
    if (typeof stored.origin !== 'string') throw refuse('a channel has no origin');
    const escrow = stored.domain?.verifyingContract;
    if (typeof escrow !== 'string' || !escrows.has(escrow.toLowerCase()))
      throw refuse(`channel ${stored.channel_id} is in an escrow batchSettlement.escrows does not allow`);
    let channelId: Hex;
    let domain: Channel['domain'];
    try {
      // The escrow's own domain, not the file's: a voucher is signed for it.
      domain = batchSettlementDomain(Number(stored.domain.chainId), escrow as Hex);
      channelId = hashTypedData({
        domain,
        types: CHANNEL_CONFIG_TYPES,
        primaryType: 'ChannelConfig',
        message: stored.config,
      });
    } catch {
      throw refuse(`channel ${stored.channel_id} has a malformed config`);
    }
    if (channelId !== stored.channel_id) throw refuse(`channel ${stored.channel_id} is not its config's`);
    if (!isAddressEqual(stored.config.payer, payer) || !isAddressEqual(stored.config.payerAuthorizer, payer))
      throw refuse(`channel ${stored.channel_id} is not paid by ${payer}`);
    if (seen.has(channelId)) throw refuse(`channel ${channelId} is there twice`);
    const refundTxs = stored.refund_txs ?? [];
    if (!Array.isArray(refundTxs) || !refundTxs.every((tx) => typeof tx === 'string' && isHash(tx)))
      throw refuse(`channel ${channelId} has malformed refund transactions`);
    seen.add(channelId);
    return {
      origin: stored.origin,
      config: stored.config,
      channelId,
      domain,
      deposited: BigInt(stored.deposited),
      charged: BigInt(stored.charged),
      signed: BigInt(stored.signed),
      // Only totals the agent could have sent: above what was charged, not above the highest sent.
      unanswered: unanswered.map(BigInt).filter((t) => t > BigInt(stored.charged) && t <= BigInt(stored.signed)),
      withdrawing: stored.withdrawing === true,
      refundTxs,
    };
  });
}
