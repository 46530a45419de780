import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity, type SecuritySchemeObject } from '@nestjs/swagger';
import { LimitPerWalletAndClient } from '../rate-limit/limits';
import { WALLET_PROOF_HEADER, WALLET_PROOF_MAX_SECONDS } from '@crawlgate/core';
import { PublisherAuthGuard, SiteTokenGuard, WalletGuard, WalletProofGuard } from './guards';

/*
 * A route's guard and its OpenAPI security requirement come from one decorator, so the document
 * names a credential (and its 401) exactly where a guard checks one.
 */
export const PublisherAuth = () => applyDecorators(UseGuards(PublisherAuthGuard), ApiBearerAuth('bearer'));
export const SiteTokenAuth = () => applyDecorators(UseGuards(SiteTokenGuard), ApiSecurity('site-token'));
/** Its routes are counted per address and client, and per client across addresses (CredentialThrottlerGuard): documented here, on every one. */
export const WalletAuth = () =>
  applyDecorators(UseGuards(WalletGuard), ApiSecurity('wallet'), LimitPerWalletAndClient());
/** WalletAuth plus proof that the caller holds the wallet (X-Wallet-Proof): both headers, one requirement. */
export const WalletProofAuth = () =>
  applyDecorators(
    UseGuards(WalletGuard, WalletProofGuard),
    ApiSecurity({ wallet: [], 'wallet-proof': [] }),
    LimitPerWalletAndClient(),
  );

export const SECURITY_SCHEMES: Record<string, SecuritySchemeObject> = {
  // An opaque key, not a JWT: no bearerFormat.
  bearer: { type: 'http', scheme: 'bearer', description: 'Publisher API key: `Authorization: Bearer xk_pub_…`' },
  'site-token': { type: 'apiKey', in: 'header', name: 'X-Site-Token', description: 'Site token: st_…' },
  wallet: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Wallet-Address',
    description: 'Agent wallet: 0x + 40 hex. A lookup key, not a proof of ownership.',
  },
  'wallet-proof': {
    type: 'apiKey',
    in: 'header',
    name: WALLET_PROOF_HEADER,
    description:
      'Proof of holding the X-Wallet-Address wallet: `<expires>.<signature>`, the 0x EIP-191 signature (personal_sign) ' +
      "of `Crawlgate payment history of <address in lower case> at <this API's origin> until <expires>`; expires in Unix seconds, " +
      `in the future and at most ${WALLET_PROOF_MAX_SECONDS} s ahead. EOAs and contract wallets (ERC-1271, ERC-6492).`,
  },
};

/** What each guard answers 401 for. */
export const UNAUTHORIZED: Record<string, string> = {
  bearer: 'Missing Authorization header, or not a valid publisher API key',
  'site-token': 'Missing X-Site-Token header, or not a valid site token',
  wallet: 'Missing X-Wallet-Address header, or not 0x followed by 40 hexadecimal characters',
  'wallet-proof': `Missing ${WALLET_PROOF_HEADER} header, expired or more than ${WALLET_PROOF_MAX_SECONDS} s ahead, or not the wallet's signature of its message`,
};
