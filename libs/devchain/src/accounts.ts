import { pbkdf2Sync } from 'node:crypto';
import { HDKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { toHex, type Address, type Hex } from 'viem';
import { DEV_MNEMONIC } from './mnemonic';

export { DEV_MNEMONIC };

/**
 * What each of the ten funded dev accounts is for, so tests and `npm start` never collide:
 * - 0 relayer: submits settlement transactions (pays gas for EIP-3009 transfers)
 * - 1 publisher: the publisher's payout address (`payTo`)
 * - 2..5 agent: crawling agents that sign payments
 * - 6..8 spare: free for ad-hoc tests
 * - 9 deployer: deploys TestUSDC at nonce 0 and owns it (mints); used for nothing else, so the
 *   token address is the same on every fresh chain
 */
export type DevRole = 'relayer' | 'publisher' | 'agent' | 'spare' | 'deployer';

export interface DevAccount {
  readonly index: number;
  readonly role: DevRole;
  readonly address: Address;
  readonly privateKey: Hex;
  /** viem local account: pass to wallet clients or `signTypedData`. */
  readonly account: PrivateKeyAccount;
}

const ROLES: readonly DevRole[] = [
  'relayer',
  'publisher',
  'agent',
  'agent',
  'agent',
  'agent',
  'spare',
  'spare',
  'spare',
  'deployer',
];

/**
 * m/44'/60'/0'/0, the parent of every dev account, derived once: viem's mnemonicToAccount
 * stretches the mnemonic (2048 rounds of HMAC-SHA512 in JavaScript) and derives the whole path
 * again for each account, and every test file that loads the dev chain paid that ten times.
 */
const DEV_PARENT_KEY = HDKey.fromMasterSeed(
  pbkdf2Sync(DEV_MNEMONIC.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512'),
).derive("m/44'/60'/0'/0");

function devAccount(index: number): DevAccount {
  const key = DEV_PARENT_KEY.deriveChild(index).privateKey;
  if (!key) throw new Error(`devchain: no private key derived for dev account ${index}`);
  const privateKey = toHex(key);
  const account = privateKeyToAccount(privateKey);
  return { index, role: ROLES[index], address: account.address, privateKey, account };
}

/** The default mnemonic's first ten accounts (m/44'/60'/0'/0/0..9), each funded with 10 000 ETH by anvil. */
export const DEV_ACCOUNTS: readonly DevAccount[] = Object.freeze(ROLES.map((_, i) => devAccount(i)));

/** The same accounts by role. */
export const DEV_ROLES = Object.freeze({
  relayer: DEV_ACCOUNTS[0],
  publisher: DEV_ACCOUNTS[1],
  agents: Object.freeze(DEV_ACCOUNTS.slice(2, 6)),
  spare: Object.freeze(DEV_ACCOUNTS.slice(6, 9)),
  deployer: DEV_ACCOUNTS[9],
});
