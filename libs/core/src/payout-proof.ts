/*
 * A payout address is named by one publisher, unless its key says otherwise: a publisher naming an
 * address another publisher already names must prove it controls that address, with an EIP-191
 * (personal_sign) signature by the address of payoutProofMessage. Payers' signatures (an EIP-3009
 * authorization, a channel's voucher) name the address paid, not the site, so two publishers of
 * one address, not both its key's, could spend each other's payers' payments.
 *
 * The API, the publisher SDK, its CLI and the dashboard all build the message here, so they always
 * sign and check the same text.
 */

/**
 * The longest proof taken: an EOA's signature is 132 characters; a contract wallet's (ERC-1271, or
 * ERC-6492 wrapping its deployment) is longer, but bounded here.
 */
export const MAX_PAYOUT_PROOF_LENGTH = 8192;

/** The text `address` signs to be the payout address of the publisher `publisherId`. */
export function payoutProofMessage(address: string, publisherId: string): string {
  return `Crawlgate payout address ${address.toLowerCase()} for publisher ${publisherId.toLowerCase()}`;
}
