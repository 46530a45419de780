import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SiteTokenAuth } from '../auth/authenticated';
import { CurrentSite } from '../auth/request-context';
import type { Site } from '../generated/prisma/client';
import { AccessTokenCheckView, VerifyAccessTokenDto } from './access-tokens.dto';
import { AccessTokenService } from './access-token.service';

@ApiTags('access tokens')
@Controller('access-tokens')
export class AccessTokensController {
  constructor(private readonly tokens: AccessTokenService) {}

  @Post('verify')
  @HttpCode(200)
  @SiteTokenAuth()
  @ApiOperation({
    summary: 'Check an access token for the site that owns the site token',
    description:
      'Counted against the site token, 100 a minute for all its visitors together: a site relaying every token its visitors send lets strangers’ junk spend the budget of its payers. Check tokens locally instead (`verifyAccessToken` with the site’s secrets, as the middleware does): no call, no budget.',
  })
  @ApiResponse({
    status: 200,
    type: AccessTokenCheckView,
    description: 'Whether the token is valid for the site that owns the site token.',
  })
  async verify(@CurrentSite() site: Site, @Body() body: VerifyAccessTokenDto): Promise<AccessTokenCheckView> {
    const check = await this.tokens.verify(site, body.token, body.url);
    return check.valid
      ? { valid: true, gate_id: check.payload.gate_id, url: check.payload.url, exp: check.payload.exp }
      : { valid: false, reason: check.reason };
  }
}
