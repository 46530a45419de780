import { batchSettlementDomain, CHANNEL_CONFIG_TYPES, type ChannelConfig, type Hex } from '@crawlgate/core';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { hashTypedData } from 'viem';
import { openChannelFile } from './channel-file';
import type { Channel } from './channels';
import { processHost } from './locked-file';

const PAYER: Hex = '0x1111111111111111111111111111111111111111';
const OTHER: Hex = '0x2222222222222222222222222222222222222222';
const ESCROW: Hex = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
const ESCROWS = new Set([ESCROW.toLowerCase()]);

function channel(overrides: Partial<ChannelConfig> = {}, escrow: Hex = ESCROW): Channel {
  const config: ChannelConfig = {
    payer: PAYER,
    payerAuthorizer: PAYER,
    receiver: '0x3333333333333333333333333333333333333333',
    receiverAuthorizer: '0x4444444444444444444444444444444444444444',
    token: '0x5555555555555555555555555555555555555555',
    withdrawDelay: 900,
    salt: `0x${'ab'.repeat(32)}`,
    ...overrides,
  };
  const domain = batchSettlementDomain(31337, escrow);
  const channelId = hashTypedData({
    domain,
    types: CHANNEL_CONFIG_TYPES,
    primaryType: 'ChannelConfig',
    message: config,
  });
  return {
    origin: 'http://127.0.0.1:1',
    config,
    channelId,
    domain,
    deposited: 500_000n,
    charged: 30_000n,
    signed: 40_000n,
    unanswered: [40_000n],
    withdrawing: false,
    refundTxs: [],
  };
}

const newPath = () => join(mkdtempSync(join(tmpdir(), 'crawlgate-channels-')), 'channels.json');
const open = (path: string) => openChannelFile(path, PAYER, ESCROWS);

/** A file as a previous run wrote it, with `edit` applied to its JSON. */
function writtenFile(edit: (json: any) => void = () => undefined): string {
  const path = newPath();
  const file = open(path);
  file.save([channel()]);
  file.release();
  const json = JSON.parse(readFileSync(path, 'utf8'));
  edit(json);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

/** A lock file as a process of this host with `pid` wrote it. */
const lockOf = (path: string, pid: number) =>
  writeFileSync(`${path}.lock`, JSON.stringify({ pid, host: processHost(), at: Date.now(), nonce: 'n' }));

describe('openChannelFile', () => {
  it('gives back what was saved, amounts exact, once the first holder released it', () => {
    const path = newPath();
    const first = open(path);
    expect(first.channels).toEqual([]);
    const saved = [
      channel(),
      {
        ...channel({ salt: `0x${'cd'.repeat(32)}` }),
        withdrawing: true,
        signed: 2n ** 100n,
        unanswered: [40_000n, 2n ** 100n],
        refundTxs: [`0x${'12'.repeat(32)}` as const],
      },
    ];
    first.save(saved);
    first.release();
    const second = open(path);
    expect(second.channels).toEqual(saved);
    second.release();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(path, '..')).sort()).toEqual(['channels.json']); // no temporary copy, no lock left
  });

  it('opens a file written before refunds (no refund_txs) with no refund credited', () => {
    const path = writtenFile((json) => delete json.channels[0].refund_txs);
    const file = open(path);
    expect(file.channels).toEqual([channel()]);
    file.release();
  });

  it('opens a file written before unanswered totals with the highest voucher sent as the one unanswered, if above the charge', () => {
    const older = open(writtenFile((json) => delete json.channels[0].unanswered));
    expect(older.channels).toEqual([channel()]);
    older.release();
    const settled = open(
      writtenFile((json) => {
        delete json.channels[0].unanswered;
        json.channels[0].charged = json.channels[0].signed;
      }),
    );
    expect(settled.channels[0].unanswered).toEqual([]);
    settled.release();
  });

  it('keeps as unanswered only totals the agent could have sent: above the charge, at most the highest voucher', () => {
    const file = open(writtenFile((json) => (json.channels[0].unanswered = ['30000', '35000', '40000', '40001'])));
    expect(file.channels[0].unanswered).toEqual([35_000n, 40_000n]);
    file.release();
  });

  it('is held by one running process: a second opening is refused until the first releases it', () => {
    const path = newPath();
    const held = open(path);
    expect(() => open(path)).toThrow(/used by another running agent/);
    held.release();
    expect(() => held.save([channel()])).toThrow(/was released/); // a released file records nothing more
    open(path).release();
  });

  it('is one file however its path is spelled: a second opening through a linked folder is refused too', () => {
    // Each spelling took a lock of its own: two agents, of one process or two, each wrote its own
    // channels over the other's (one funded channel lost from the file).
    const path = newPath();
    const linked = join(mkdtempSync(join(tmpdir(), 'crawlgate-link-')), 'folder');
    symlinkSync(dirname(path), linked);
    const held = open(path);
    expect(() => open(join(linked, 'channels.json'))).toThrow(/used by another running agent/);
    held.release();
    open(join(linked, 'channels.json')).release();
  });

  it('takes over the lock of a process of this host that died', () => {
    const path = writtenFile();
    lockOf(path, spawnSync(process.execPath, ['-e', '']).pid!);
    const file = open(path);
    expect(file.channels.map((c) => c.channelId)).toEqual([channel().channelId]);
    file.release();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('takes over a lock naming this very pid that this process does not hold (a restarted container)', () => {
    const path = writtenFile();
    lockOf(path, process.pid);
    const file = open(path);
    expect(file.channels).toHaveLength(1);
    file.release();
    // The container before this one, in its own pid namespace, with this pid or another; and an
    // agent of a version that wrote the host name alone.
    for (const predecessor of [
      { pid: process.pid, host: `${hostname()} pid:[4026530000]` },
      { pid: 2 ** 22 + 7, host: `${hostname()} pid:[4026530000]` },
      { pid: 2 ** 22 + 7, host: hostname() },
    ]) {
      writeFileSync(`${path}.lock`, JSON.stringify({ ...predecessor, at: Date.now(), nonce: 'n' }));
      const again = open(path);
      expect(again.channels).toHaveLength(1);
      again.release();
    }
  });

  it('releases only its own lock', () => {
    const path = newPath();
    const file = open(path);
    rmSync(`${path}.lock`);
    lockOf(path, process.pid + 1); // another holder's, taken since
    file.release();
    expect(existsSync(`${path}.lock`)).toBe(true);
  });

  it('leaves no temporary copy when a write fails, and throws', () => {
    const path = newPath();
    const file = open(path);
    file.save([channel()]);
    // A value JSON cannot write: the write fails after the temporary file was opened.
    expect(() => file.save([{ ...channel(), deposited: { toString: () => 1n } as unknown as bigint }])).toThrow();
    file.release();
    expect(readdirSync(join(path, '..')).sort()).toEqual(['channels.json']);
    expect(JSON.parse(readFileSync(path, 'utf8')).channels).toHaveLength(1);
  });

  const untrusted: [string, (json: any) => void, RegExp][] = [
    ['another payer’s file', (json) => (json.payer = OTHER), /holds .* channels/],
    [
      'a channel id that is not its config’s',
      (json) => (json.channels[0].config.salt = `0x${'ef'.repeat(32)}`),
      /is not its config's/,
    ],
    [
      'a channel paid by another payer',
      (json) => {
        json.channels[0].config.payer = OTHER;
        json.channels[0].channel_id = channel({ payer: OTHER }).channelId;
      },
      /is not paid by/,
    ],
    [
      'a voucher signer other than the payer',
      (json) => {
        json.channels[0].config.payerAuthorizer = OTHER;
        json.channels[0].channel_id = channel({ payerAuthorizer: OTHER }).channelId;
      },
      /is not paid by/,
    ],
    [
      'a channel in an escrow the agent does not allow',
      (json) => {
        const elsewhere = channel({}, OTHER);
        json.channels[0].domain = elsewhere.domain;
        json.channels[0].channel_id = elsewhere.channelId;
      },
      /escrow batchSettlement.escrows does not allow/,
    ],
    [
      'a domain other than the escrow’s, its channel id made to match it',
      (json) => {
        const stored = json.channels[0];
        stored.domain.name = 'Other';
        stored.channel_id = hashTypedData({
          domain: stored.domain,
          types: CHANNEL_CONFIG_TYPES,
          primaryType: 'ChannelConfig',
          message: stored.config,
        });
      },
      /is not its config's/,
    ],
    ['the same channel twice', (json) => json.channels.push(json.channels[0]), /is there twice/],
    ['a channel charged above its deposits', (json) => (json.channels[0].charged = '500001'), /above its deposits/],
    ['an amount that is not an integer', (json) => (json.channels[0].signed = '1.5'), /not an integer/],
    ['an unanswered total that is not an integer', (json) => (json.channels[0].unanswered = ['1e5']), /not an integer/],
    ['unanswered totals that are not a list', (json) => (json.channels[0].unanswered = '40000'), /not an integer/],
    ['a negative amount', (json) => (json.channels[0].deposited = '-1'), /not an integer/],
    ['a malformed config', (json) => (json.channels[0].config.withdrawDelay = 'soon'), /malformed config/],
    ['an unknown format', (json) => (json.version = 2), /unknown format/],
    ['refund transactions that are not hashes', (json) => (json.channels[0].refund_txs = ['0x12']), /malformed refund/],
    ['refund transactions that are not a list', (json) => (json.channels[0].refund_txs = 'none'), /malformed refund/],
  ];
  it.each(untrusted)('refuses %s, and leaves no lock behind', (_what, edit, message) => {
    const path = writtenFile(edit);
    expect(() => open(path)).toThrow(message);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
