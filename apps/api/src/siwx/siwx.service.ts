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
import { getAddress, isErc6492Signature, isErc8010Signature, type Address, type Hex } from 'viem';
import { AccessTokenService } from '../access-tokens/access-token.service';
import { hasCode } from '../chain/account-code';
import type { ChainContext } from '../chain/chain-context';
import { signedLocally, signedOnChain } from '../chain/signed-message';
import { CHAIN } from '../chain/tokens';
import type { Site } from '../generated/prisma/client';
import { ApiError } from '../http/api-error';
import { spendFromBucket } from '../rate-limit/bucket';
import { SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER, SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH } from '../rate-limit/limits';
import { SiteSecretsService } from '../sites/site-secrets.service';
import { expectedSiweMessage } from './siwx-message';
import { SiwxStore } from './siwx.store';

const NONCE_REFUSALS: Record<Exclude<SiwxNonceCheck, { valid: true }>['reason'], string> = {
  expired: 'The sign-in challenge expired: answer a fresh 402',
  too_long: `The sign-in challenge outlives the ${SIWX_CHALLENGE_SECONDS} s a challenge lasts (beyond the clocks' allowed skew): answer a fresh 402, and check the site's clock`,
  malformed: 'The nonce was not issued by this site for this path',
  bad_signature: 'The nonce was not issued by this site for this path',
};

const notProven = () => new ApiError(401, 'The signature does not prove this address signed the challenge');
const uncheckable = () =>
  new ApiError(503, 'The signature could not be checked on chain; retry later', {}, { 'retry-after': '5' });

/**
 * Re-access with x402's sign-in-with-x: a wallet proves it is the payer of a path on this site and
 * gets that payment's token again, unchanged, so access never outlasts what was paid. Checks, cheap
 * first: a nonce this site issued for this path and not expired, the proof's domain, URI and chain,
 * the signature over the message rebuilt from what we expect as far as it can be judged alike for
 * every wallet (refuseWhatNoPayerSends), a confirmed payment by that wallet for that path whose token
 * lives, then a contract wallet's own check, and last the nonce spent once (a replay is refused).
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
      throw notProven(); // a path or domain EIP-4361 cannot carry: no proof can be for it
    }
    const signed = { address, message, signature: proof.signature };
    // An address's own plain signature is recovered here. Any other proof is judged as far as it can
    // be before the payment is looked up, alike whether the wallet paid or not, so a stranger's proofs
    // under a payer's public address get the answers (and the 429) they get under anyone else's: what
    // a wallet bought stays its own. Only a contract wallet that paid goes on to its own check.
    const own = await signedLocally(signed);
    if (!own) await this.refuseWhatNoPayerSends(site, address, path, proof.signature);
    const payment = await this.store.livePayment(site.id, address.toLowerCase(), path, now);
    if (!payment || !payment.tokenKid || !payment.tokenIssuedAt || !payment.tokenExpiresAt) {
      throw new ApiError(
        402,
        'This wallet has no payment for this path on this site whose access token is still valid',
      );
    }
    // Recovered above, or a contract wallet whose code was read above: only its own check is left.
    const proven = own || (await signedOnChain(this.chain, signed));
    if (proven === 'unchecked') throw uncheckable();
    if (!proven) throw notProven();
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
   * What a proof that is not the address's own plain signature must pass whoever the wallet is,
   * before any payment is read. Counted (SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH, then per publisher
   * across its sites: a site token's holder names any visitor), 429 past either. A wrapper (ERC-6492
   * for a wallet not deployed, ERC-8010) is 401: no wallet that paid needs one (it paid as an EOA or
   * from its deployed contract), and its factory is the sender's own code. An address with no code
   * is 401: an EOA signs only as itself. 503 when the node cannot say.
   */
  private async refuseWhatNoPayerSends(site: Site, address: Address, path: string, signature: Hex): Promise<void> {
    const why = (limit: number, of: string) =>
      `More than ${limit} sign-ins a minute ${of} needed the chain to check their signature (a smart wallet's, or one that does not hold); retry later`;
    const perPath = SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH;
    const perPublisher = SIGN_IN_CHAIN_CHECKS_PER_PUBLISHER;
    await spendFromBucket(
      this.buckets,
      `SiwxChainChecks-site:${site.id}/wallet:${address.toLowerCase()}/path:${path}`,
      perPath,
      why(perPath.limit, 'for this wallet and path on this site'),
    );
    await spendFromBucket(
      this.buckets,
      `SiwxChainChecks-publisher:${site.publisherId}`,
      perPublisher,
      why(perPublisher.limit, "on this site's publisher's sites"),
    );
    if (isErc6492Signature(signature) || isErc8010Signature(signature)) throw notProven();
    let code: boolean;
    try {
      code = await hasCode(this.chain.publicClient, address);
    } catch {
      throw uncheckable();
    }
    if (!code) throw notProven();
  }
}
