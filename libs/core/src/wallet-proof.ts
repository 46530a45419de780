/*
 * GET /v1/agents/me/payments shows what the chain never does (the paths paid, the sites, gates and
 * vouchers), so naming a wallet's address is not enough there: the caller proves it holds the
 * wallet with a short-lived EIP-191 (personal_sign) signature of paymentHistoryMessage, sent as
 *
 *   X-Wallet-Proof: <expires>.<0x signature>      (expires: Unix seconds)
 *
 * The agent SDK and the API both build the message and read the header here, so they always sign
 * and check the same text. The message names the address, the API's origin and the expiry: a proof
 * opens one wallet's history at one API, for at most WALLET_PROOF_MAX_SECONDS. The origin, because
 * an agent learns its API from a site's 402 (verify_url): a hostile site naming itself would get a
 * proof it could replay to the real API.
 */

/** The request header a proof comes in (header names are case-insensitive). */
export const WALLET_PROOF_HEADER = 'X-Wallet-Proof';
/** The furthest ahead a proof may expire: a proof read off a log or proxy opens the history no longer. */
export const WALLET_PROOF_MAX_SECONDS = 300;
/**
 * A header longer than this is no proof of ours: an EOA's signature is 132 characters; a contract
 * wallet's (ERC-1271, or ERC-6492 wrapping its deployment) is longer, but bounded here.
 */
export const MAX_WALLET_PROOF_LENGTH = 8192;

/**
 * The text the wallet signs to read its payment history at the API of `apiOrigin` (scheme, host and
 * port, as `new URL(base).origin` spells it) until `expires` (Unix seconds).
 */
export function paymentHistoryMessage(address: string, apiOrigin: string, expires: number): string {
  return `Crawlgate payment history of ${address.toLowerCase()} at ${apiOrigin} until ${expires}`;
}

/** The header's value: `<expires>.<signature>`. */
export function formatWalletProof(expires: number, signature: `0x${string}`): string {
  return `${expires}.${signature}`;
}

export interface WalletProof {
  /** Unix seconds. */
  expires: number;
  signature: `0x${string}`;
}

const PROOF = /^([1-9][0-9]{0,11})\.(0x(?:[0-9a-fA-F]{2})+)$/;

/** The expiry and signature of a header of formatWalletProof's form; undefined for anything else. */
export function readWalletProof(header: string): WalletProof | undefined {
  if (header.length > MAX_WALLET_PROOF_LENGTH) return undefined;
  const parts = PROOF.exec(header);
  return parts ? { expires: Number(parts[1]), signature: parts[2] as `0x${string}` } : undefined;
}

/** Whether a proof expiring at `expires` is usable at `now` (both Unix seconds): not expired, not too far ahead. */
export function isWalletProofTimely(expires: number, now: number): boolean {
  return now < expires && expires <= now + WALLET_PROOF_MAX_SECONDS;
}
