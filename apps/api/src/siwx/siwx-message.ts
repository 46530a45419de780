import { siwxMessageFields, type SiwxChallengeTerms } from '@crawlgate/core';
import { createSiweMessage } from 'viem/siwe';

/**
 * The EIP-4361 message a proof for these terms must have signed, built from what the API expects
 * (domain, path, chain, the nonce's expiry), never from what the proof claims. Byte for byte the
 * message @x402/extensions' client signs (siwx-message.spec.ts).
 */
export function expectedSiweMessage(terms: SiwxChallengeTerms, chainId: number, address: `0x${string}`): string {
  const fields = siwxMessageFields(terms);
  return createSiweMessage({
    ...fields,
    address,
    chainId,
    issuedAt: new Date(fields.issuedAt),
    expirationTime: new Date(fields.expirationTime),
  });
}
