import { CHANNEL_CONFIG_TYPES, type ChannelConfig, type Hex } from '@crawlgate/core';
import { hashTypedData, isAddressEqual } from 'viem';
import type { Channel } from './channels';
import { holdLock, readJsonFile, writeJsonAtomically } from './locked-file';

/*
 * An agent's batch-settlement channels kept in a JSON file (batchSettlement.channelFile), so that a
 * restarted agent pays on the channels it opened, with the deposits already in them, and can
 * withdraw from them. One process at a time: the file's lock is held while the agent's process
 * runs, and taken over from a holder of this host that died. The agent writes the file before
 * each deposit or voucher leaves it (what it sent is never less than what the file says) and
 * after each answer.
 */

export interface StoredChannel {
  /** The ChannelBook key: origin and terms. */
  key: string;
  channel: Channel;
}

export interface ChannelFile {
  /** The channels the file held when opened. */
  channels: StoredChannel[];
  save(channels: StoredChannel[]): void;
  /** Lets another process open the file (also done when this process exits). */
  release(): void;
}

interface StoredChannelJson {
  key: string;
  origin: string;
  channel_id: Hex;
  config: ChannelConfig;
  domain: Channel['domain'];
  deposited: string;
  charged: string;
  signed: string;
  withdrawing: boolean;
}

interface StoredFile {
  version: 1;
  payer: Hex;
  channels: StoredChannelJson[];
}

/** Opens `path` for `payer`'s channels; throws when another running process holds it or it is not such a file. */
export function openChannelFile(path: string, payer: Hex): ChannelFile {
  const release = holdLock(
    `${path}.lock`,
    `The channel file ${path} is used by another running agent (${path}.lock); one process at a time`,
  );
  try {
    const channels = readChannels(path, payer);
    return {
      channels,
      save: (list) =>
        writeJsonAtomically(path, {
          version: 1,
          payer,
          channels: list.map(({ key, channel: c }) => ({
            key,
            origin: c.origin,
            channel_id: c.channelId,
            config: c.config,
            domain: c.domain,
            deposited: c.deposited.toString(),
            charged: c.charged.toString(),
            signed: c.signed.toString(),
            withdrawing: c.withdrawing,
          })),
        } satisfies StoredFile),
      release,
    };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * A file that is not ours (another payer's, or a channel whose id is not its config's) is refused
 * rather than trusted or emptied: the agent signs vouchers for these channels, and a file it could
 * not read is not an agent without channels.
 */
function readChannels(path: string, payer: Hex): StoredChannel[] {
  const parsed = readJsonFile(path) as StoredFile | undefined;
  if (parsed === undefined) return [];
  const refuse = (why: string) => new Error(`${path} is not a channel file of ${payer}: ${why}`);
  if (parsed?.version !== 1 || !Array.isArray(parsed.channels) || typeof parsed.payer !== 'string')
    throw refuse('unknown format');
  if (!isAddressEqual(parsed.payer, payer)) throw refuse(`it holds ${parsed.payer}'s channels`);
  return parsed.channels.map((stored) => {
    const amounts = [stored.deposited, stored.charged, stored.signed];
    if (!amounts.every((a) => typeof a === 'string' && /^\d{1,78}$/.test(a)))
      throw refuse('an amount is not an integer');
    if (typeof stored.key !== 'string' || typeof stored.origin !== 'string') throw refuse('a channel has no origin');
    let channelId: Hex;
    try {
      channelId = hashTypedData({
        domain: stored.domain,
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
    return {
      key: stored.key,
      channel: {
        origin: stored.origin,
        config: stored.config,
        channelId,
        domain: stored.domain,
        deposited: BigInt(stored.deposited),
        charged: BigInt(stored.charged),
        signed: BigInt(stored.signed),
        withdrawing: stored.withdrawing === true,
      },
    };
  });
}
