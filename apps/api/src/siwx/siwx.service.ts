import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import {
  readSiwxProof,
  SIWX_CHALLENGE_SECONDS,
  siwxMessageFields,
  verifySiwxNonce,
  type SiwxAccess,
  type SiwxChallengeTerms,
  type SiwxNonceCheck,
} from '@crawlgate/core';
import { getAddress } from 'viem';
import { AccessTokenService } from '../access-tokens/access-token.service';
import type { ChainContext } from '../chain/chain-context';
import { signedMessageBy } from '../chain/signed-message';
import { CHAIN } from '../chain/tokens';
import type { Site } from '../generated/prisma/client';
import { ApiError } from '../http/api-error';
import { spendFromBucket } from '../rate-limit/bucket';
import {
  SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER,
  SIGN_IN_CHAIN_CHECKS_PER_SITE,
  SIGN_IN_CHAIN_CHECKS_PER_WALLET,
} from '../rate-limit/limits';
import { SiteSecretsService } from '../sites/site-secrets.service';
import { expectedSiweMessage } from './siwx-message';
import { SiwxStore } from './siwx.store';

const NONCE_REFUSALS: Record<Exclude<SiwxNonceCheck, { valid: true }>['reason'], string> = {
  expired: 'The sign-in challenge expired: answer a fresh 402',
  too_long: `The sign-in challenge outlives the ${SIWX_CHALLENGE_SECONDS} s a challenge lasts (beyond the clocks' allowed skew): answer a fresh 402, and check the site's clock`,
  malformed: 'The nonce was not issued by this site for this path',
  bad_signature: 'The nonce was not issued by this site for this path',
};

/**
 * Re-access with x402's sign-in-with-x: a wallet proves it is the payer of a path on this site and
 * gets that payment's token again, unchanged, so access never outlasts what was paid. Checks, cheap
 * first: a nonce this site issued for this path and not expired, the proof's domain, URI and chain,
 * the signature over the message rebuilt from what we expect, then a confirmed payment by that
 * wallet for that path whose token lives, and last the nonce spent once (a replay is refused).
 */
@Injectable()
export class SiwxService {
  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly store: SiwxStore,
    private readonly secrets: SiteSecretsService,
    private readonly tokens: AccessTokenService,
    @InjectThrottlerStorage() private readonly buckets: ThrottlerStorage,
  ) {}

  async reaccess(site: Site, header: string, path: string, now = new Date()): Promise<SiwxAccess> {
    const proof = readSiwxProof(header);
    if (!proof)
      throw new ApiError(
        400,
        'proof is not a SIGN-IN-WITH-X header: base64 JSON with address, signature, nonce, domain, uri and chainId',
      );

    const usable = await this.secrets.usable(site.id, site.secretsVersion);
    const nonce = verifySiwxNonce(
      proof.nonce,
      { siteId: site.id, path },
      usable.map((secret) => secret.secret),
      Math.floor(now.getTime() / 1000),
    );
    if (!nonce.valid) throw new ApiError(401, NONCE_REFUSALS[nonce.reason]);
    const terms: SiwxChallengeTerms = {
      domain: site.domain,
      path,
      caip2: this.chain.network.caip2,
      nonce: proof.nonce,
      exp: nonce.exp,
    };
    if (
      proof.domain !== terms.domain ||
      // The URI the challenge named: the path percent-encoded where a URI cannot hold it ("/café").
      proof.uri !== siwxMessageFields(terms).uri ||
      proof.chainId !== terms.caip2
    ) {
      throw new ApiError(401, 'The proof is for another domain, URI or chain than this site, path and network');
    }
    // The signature before the payment: what a wallet bought is its own. Looked up first, a stranger's
    // proof under a payer's public address went on to the chain's check (and its budget's 429) where
    // anyone else's stopped at "no payment": probes told which paths the address had bought.
    const address = getAddress(proof.address);
    const signed = await this.signedBy(terms, address, proof.signature, site);
    if (signed === 'unchecked')
      throw new ApiError(503, 'The signature could not be checked on chain; retry later', {}, { 'retry-after': '5' });
    if (!signed) throw new ApiError(401, 'The signature does not prove this address signed the challenge');
    const payment = await this.store.livePayment(site.id, address.toLowerCase(), path, now);
    if (!payment || !payment.tokenKid || !payment.tokenIssuedAt || !payment.tokenExpiresAt) {
      throw new ApiError(
        402,
        'This wallet has no payment for this path on this site whose access token is still valid',
      );
    }
    if (!(await this.store.spendNonce(proof.nonce, site.id, new Date(nonce.exp * 1000)))) {
      throw new ApiError(409, 'This proof was already used: answer a fresh 402');
    }
    const token = await this.tokens.reissue(
      { gateId: payment.gateId, siteId: site.id, url: payment.url },
      payment.tokenKid,
      payment.tokenIssuedAt,
      payment.tokenExpiresAt,
    );
    return {
      access_token: token.token,
      expires_at: token.expiresAt.toISOString(),
      url: payment.url,
      payer: payment.payer,
    };
  }

  /** EOA (ECDSA) and smart wallets (ERC-1271, ERC-6492) alike, through the chain's verifyMessage. */
  private async signedBy(
    terms: SiwxChallengeTerms,
    address: `0x${string}`,
    signature: `0x${string}`,
    site: Site,
  ): Promise<boolean | 'unchecked'> {
    let message: string;
    try {
      message = expectedSiweMessage(terms, this.chain.chainId, address);
    } catch {
      return false; // a path or domain EIP-4361 cannot carry: no proof can be for it
    }
    return signedMessageBy(this.chain, { address, message, signature }, () => this.countChainCheck(site, address));
  }

  /**
   * One more sign-in asked of the chain for this wallet on this site, for the site and for its
   * publisher (SIGN_IN_CHAIN_CHECKS_PER_*); 429 once one of them is spent.
   */
  private async countChainCheck(site: Site, address: string): Promise<void> {
    const why = (limit: number, of: string) =>
      `More than ${limit} sign-ins a minute ${of} needed the chain to check their signature (a smart wallet's, or one that does not hold); retry later`;
    const perWallet = SIGN_IN_CHAIN_CHECKS_PER_WALLET;
    const perSite = SIGN_IN_CHAIN_CHECKS_PER_SITE;
    const perPublisher = SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER;
    await spendFromBucket(
      this.buckets,
      `SiwxChainChecks-site:${site.id}/wallet:${address.toLowerCase()}`,
      perWallet,
      why(perWallet.limit, 'for this wallet on this site'),
    );
    await spendFromBucket(this.buckets, `SiwxChainChecks-site:${site.id}`, perSite, why(perSite.limit, 'on this site'));
    await spendFromBucket(
      this.buckets,
      `SiwxChainChecks-publisher:${site.publisherId}`,
      perPublisher,
      why(perPublisher.limit, "on this site's publisher's sites"),
    );
  }
}
