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
import { signedLocally, signedMessageBy } from '../chain/signed-message';
import { CHAIN } from '../chain/tokens';
import type { Site } from '../generated/prisma/client';
import { ApiError } from '../http/api-error';
import { spendFromBucket } from '../rate-limit/bucket';
import { SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH } from '../rate-limit/limits';
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
 * a confirmed payment by that wallet for that path whose token lives, then the signature over the
 * message rebuilt from what we expect, and last the nonce spent once (a replay is refused).
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
    const address = getAddress(proof.address);
    let message: string;
    try {
      message = expectedSiweMessage(terms, this.chain.chainId, address);
    } catch {
      // A path or domain EIP-4361 cannot carry: no proof can be for it.
      throw new ApiError(401, 'The signature does not prove this address signed the challenge');
    }
    const signed = { address, message, signature: proof.signature };
    // An address's own plain signature is recovered here. Any other proof is counted before the payment
    // is looked up, alike whether the wallet paid or not: a stranger's proofs under a payer's public
    // address get the answers (and the 429) they get under anyone else's, so what it bought stays its
    // own. Only a payer's go on to the chain (bounded by real payments); one that never paid costs a read.
    const own = await signedLocally(signed);
    if (!own) await this.countSignInAskingChain(site.id, address, path);
    const payment = await this.store.livePayment(site.id, address.toLowerCase(), path, now);
    if (!payment || !payment.tokenKid || !payment.tokenIssuedAt || !payment.tokenExpiresAt) {
      throw new ApiError(
        402,
        'This wallet has no payment for this path on this site whose access token is still valid',
      );
    }
    const proven = own || (await signedMessageBy(this.chain, signed));
    if (proven === 'unchecked')
      throw new ApiError(503, 'The signature could not be checked on chain; retry later', {}, { 'retry-after': '5' });
    if (!proven) throw new ApiError(401, 'The signature does not prove this address signed the challenge');
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

  /**
   * One more sign-in for this wallet and path on this site whose signature only the chain can judge
   * (a smart wallet's, or one that does not hold): SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH; 429 once spent.
   */
  private countSignInAskingChain(siteId: string, address: string, path: string): Promise<void> {
    const { limit } = SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH;
    return spendFromBucket(
      this.buckets,
      `SiwxChainChecks-site:${siteId}/wallet:${address.toLowerCase()}/path:${path}`,
      SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH,
      `More than ${limit} sign-ins a minute for this wallet and path on this site needed the chain to check their signature (a smart wallet's, or one that does not hold); retry later`,
    );
  }
}
