/*
 * A tx hash alone proves that a transfer happened, not who is presenting it: anyone can read a
 * fresh transfer to a site's pay_to off the chain. So the payer signs this message (EIP-191
 * personal_sign) for the gate it pays, and the API grants the token only with that signature.
 * The agent SDK and the API both build it here, so they always sign and check the same text.
 */

/** The text the transfer's `from` signs to claim gate `gateRef` with transaction `txHash`. */
export function transferProofMessage(gateRef: string, txHash: string): string {
  return `Crawlgate transfer proof\ngate: ${gateRef.toLowerCase()}\ntx: ${txHash.toLowerCase()}`;
}
