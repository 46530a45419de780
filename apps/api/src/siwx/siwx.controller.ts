import { SIWX_CHALLENGE_SECONDS } from '@crawlgate/core';
import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { SiteTokenGuard } from '../auth/guards';
import { CurrentSite } from '../auth/request-context';
import { NoStore } from '../http/no-store';
import { LimitPerSignInVisitor } from '../rate-limit/limits';
import type { Site } from '../generated/prisma/client';
import { SiwxAccessDto, SiwxAccessView } from './siwx.dto';
import { SiwxService } from './siwx.service';

/**
 * Rate limit: 100 per minute per wallet a proof names and visitor (client_ip), per site token: proofs
 * of strangers never hold a payer off; and 300 per visitor across the wallets its proofs name (per
 * site token when the middleware names none: SIGN_INS_PER_VISITOR), since a wallet is any fresh
 * key. Signatures only the chain can check (a smart wallet's, or one that does not hold): 10 a
 * minute per wallet and path on the site (SIGN_IN_CHAIN_CHECKS_PER_WALLET_PATH) and 600 per
 * publisher, counted whether the wallet paid or not, then 429, whoever sent them: junk proofs naming
 * a smart wallet do hold off its sign-ins (bounded chain calls, traded for it; an EOA's own never are).
 */
@ApiTags('access tokens')
@Controller('access-tokens')
export class SiwxController {
  constructor(private readonly siwx: SiwxService) {}

  @Post('siwx')
  @LimitPerSignInVisitor(100)
  @HttpCode(200)
  @NoStore()
  @UseGuards(SiteTokenGuard)
  @ApiSecurity('site-token')
  @ApiOperation({
    summary: "Re-access with x402's sign-in-with-x: the token of a wallet's payment for this path, again",
    description:
      'The middleware forwards a SIGN-IN-WITH-X proof answering the challenge of its 402. Honoured once per challenge, only for the wallet that paid for exactly this path on this site, while that payment’s token is valid; the answer is that token, with its original expiry.',
  })
  @ApiResponse({ status: 200, type: SiwxAccessView, description: 'The proof holds: the payment’s access token.' })
  @ApiResponse({ status: 400, description: 'The proof is not a SIGN-IN-WITH-X header.' })
  @ApiResponse({
    status: 401,
    description: `Bad site token; or the nonce is not this site’s for this path, expired, or outlives the ${SIWX_CHALLENGE_SECONDS} s a challenge lasts (beyond the clocks’ allowed skew); or the signature does not hold (junk no wallet signed, or the wallet’s own "no", a revert included).`,
  })
  @ApiResponse({
    status: 402,
    description: 'This wallet has no payment for this path on this site with a valid token.',
  })
  @ApiResponse({ status: 409, description: 'The proof was already used.' })
  @ApiResponse({ status: 422, description: 'Invalid body.' })
  @ApiResponse({
    status: 503,
    description:
      'A smart wallet’s signature could not be checked: the node was down, timed out or refused the call (a rate limit), or the wallet’s answer could not be read (larger than a node reply may be). Retry after `Retry-After`; it is no "no".',
  })
  async reaccess(@CurrentSite() site: Site, @Body() body: SiwxAccessDto): Promise<SiwxAccessView> {
    return this.siwx.reaccess(site, body.proof, body.url);
  }
}
