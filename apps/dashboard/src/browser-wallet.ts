/*
 * The wallet a browser extension injects (EIP-1193: MetaMask, Coinbase Wallet, Rabby…), used to
 * sign the text that proves a payout address is yours: most wallets sign text only when a page
 * asks them to.
 */
import { HEX_BYTES } from '@crawlgate/core';

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** The injected wallet, if the browser has one. */
export function browserWallet(): Eip1193Provider | undefined {
  const injected = (window as { ethereum?: Partial<Eip1193Provider> }).ethereum;
  return typeof injected?.request === 'function' ? (injected as Eip1193Provider) : undefined;
}

/** `message` signed with personal_sign (EIP-191) by `address`, once the wallet lets this page connect. */
export async function signWithBrowserWallet(
  wallet: Eip1193Provider,
  address: string,
  message: string,
): Promise<string> {
  await wallet.request({ method: 'eth_requestAccounts' });
  const signature = await wallet.request({ method: 'personal_sign', params: [utf8Hex(message), address] });
  if (typeof signature !== 'string' || !HEX_BYTES.test(signature)) throw new Error('The wallet gave no signature');
  return signature;
}

/** `text` as personal_sign takes it: its UTF-8 bytes in 0x hex. */
export function utf8Hex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
