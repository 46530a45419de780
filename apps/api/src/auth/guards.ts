import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import {
  isWalletProofTimely,
  paymentHistoryMessage,
  readWalletProof,
  WALLET_PROOF_HEADER,
  WALLET_PROOF_MAX_SECONDS,
} from '@crawlgate/core';
import type { ChainContext } from '../chain/chain-context';
import { signedMessageBy } from '../chain/signed-message';
import { CHAIN } from '../chain/tokens';
import type { Database } from '../db/database';
import type { AppConfig } from '../config/config';
import { CONFIG, DATABASE } from '../db/tokens';
import { ApiError, unauthorized } from '../http/api-error';
import { requestBaseUrl } from '../http/request-base-url';
import { spendFromBucket } from '../rate-limit/bucket';
import { WALLET_PROOF_CHAIN_CHECKS_PER_CLIENT, WALLET_PROOF_CHAIN_CHECKS_PER_WALLET } from '../rate-limit/limits';
import { clientNetwork } from '../rate-limit/trackers';
import { authenticatePublisher, authenticateSite, headerText, walletOf, type CredentialKind } from './credentials';
import type { AuthedRequest } from './request-context';

/*
 * Each guard names the kind of credential it checks (`credential`), so the rate limiter counts a
 * route's requests by that credential (rate-limit/credential-throttler.guard.ts).
 */

@Injectable()
export class PublisherAuthGuard implements CanActivate {
  static readonly credential: CredentialKind = 'publisher';
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'authorization'))
      throw unauthorized('Missing Authorization header; send "Bearer xk_pub_..."');
    const publisher = await authenticatePublisher(this.db, request);
    if (!publisher) throw unauthorized('Invalid API key');
    request.publisher = publisher;
    return true;
  }
}

@Injectable()
export class SiteTokenGuard implements CanActivate {
  static readonly credential: CredentialKind = 'site';
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'x-site-token')) throw unauthorized('Missing X-Site-Token header');
    const site = await authenticateSite(this.db, request);
    if (!site) throw unauthorized('Invalid site token');
    request.site = site;
    return true;
  }
}

/**
 * Agents are identified by address only: a lookup key, not proof of ownership (see the spec);
 * WalletProofGuard adds the proof where the answer shows what the chain does not.
 */
@Injectable()
export class WalletGuard implements CanActivate {
  static readonly credential: CredentialKind = 'wallet';

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    if (!headerText(request, 'x-wallet-address')) throw unauthorized('Missing X-Wallet-Address header');
    const wallet = walletOf(request);
    if (!wallet) throw unauthorized('X-Wallet-Address must be 0x followed by 40 hexadecimal characters');
    request.wallet = wallet;
    return true;
  }
}

/** What a wallet proof is, for the 401s that ask for one. */
const WALLET_PROOF_EXPECTED =
  `send ${WALLET_PROOF_HEADER}: "<expires>.<signature>", the 0x EIP-191 signature (personal_sign) by the ` +
  `X-Wallet-Address wallet of "Crawlgate payment history of <address in lower case> at <this API's origin> until <expires>", ` +
  `expires in Unix seconds, in the future and at most ${WALLET_PROOF_MAX_SECONDS} s ahead`;

/**
 * After WalletGuard, on routes that show what the chain does not (the paths paid, the sites, gates
 * and vouchers): the caller proves it holds the wallet it names, with a short-lived signature
 * (core's wallet-proof.ts). It names no credential of its own: the route is counted by the address.
 */
@Injectable()
export class WalletProofGuard implements CanActivate {
  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(CONFIG) private readonly config: AppConfig,
    @InjectThrottlerStorage() private readonly buckets: ThrottlerStorage,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    const wallet = request.wallet;
    if (!wallet) throw new Error('WalletProofGuard runs after WalletGuard');
    const header = headerText(request, WALLET_PROOF_HEADER.toLowerCase());
    if (!header) throw unauthorized(`Missing ${WALLET_PROOF_HEADER} header: ${WALLET_PROOF_EXPECTED}`);
    const proof = readWalletProof(header);
    if (!proof) throw unauthorized(`${WALLET_PROOF_HEADER} is not "<expires>.<signature>": ${WALLET_PROOF_EXPECTED}`);
    // The clock first: an expired or far-off proof costs no signature check (a smart wallet's asks the chain).
    if (!isWalletProofTimely(proof.expires, Math.floor(Date.now() / 1000)))
      throw unauthorized(`${WALLET_PROOF_HEADER} has expired or expires too far ahead: ${WALLET_PROOF_EXPECTED}`);
    // This API's own origin: a proof a site obtained for itself (naming its origin) opens nothing here.
    // Without PUBLIC_BASE_URL (only on `local`) it is the Host the request names, maybe not a URL's.
    const base = requestBaseUrl(this.config, request);
    const origin = URL.canParse(base) ? new URL(base).origin : undefined;
    if (!origin) throw unauthorized(`This API's origin cannot be read from the request's Host header`);
    const message = paymentHistoryMessage(wallet, origin, proof.expires);
    const signed = await signedMessageBy(this.chain, { address: wallet, message, signature: proof.signature }, () =>
      this.countChainCheck(request, wallet),
    );
    if (signed === 'unchecked')
      throw new ApiError(503, 'The signature could not be checked on chain; retry later', {}, { 'retry-after': '5' });
    if (!signed)
      throw unauthorized(
        `${WALLET_PROOF_HEADER} is not this wallet's signature of its message, whose origin here is ${origin}: ${WALLET_PROOF_EXPECTED}`,
      );
    return true;
  }

  /**
   * One more proof asked of the chain, for this address and for this client across the addresses it
   * names (WALLET_PROOF_CHAIN_CHECKS_PER_*); 429 once one is spent. A wallet's own plain signature is
   * recovered locally and never counted.
   */
  private async countChainCheck(request: AuthedRequest, wallet: string): Promise<void> {
    const perWallet = WALLET_PROOF_CHAIN_CHECKS_PER_WALLET;
    const perClient = WALLET_PROOF_CHAIN_CHECKS_PER_CLIENT;
    const why = (limit: number, of: string) =>
      `More than ${limit} wallet proofs a minute ${of} needed the chain to check their signature (a smart wallet's, or one that does not hold); retry later`;
    await spendFromBucket(
      this.buckets,
      `WalletProofChainChecks-wallet:${wallet.toLowerCase()}`,
      perWallet,
      why(perWallet.limit, 'for this address'),
    );
    await spendFromBucket(
      this.buckets,
      `WalletProofChainChecks-network:${clientNetwork(request.ip)}`,
      perClient,
      why(perClient.limit, 'from this client'),
    );
  }
}
