import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { WalletGuard } from '../auth/guards';
import { CurrentWallet } from '../auth/request-context';
import { AgentProfileView } from './agents.dto';
import { AgentsService } from './agents.service';
import { ApiPageQueries, parsePageRequest } from './page-request';
import { PaymentPageView } from './payment-history.dto';
import { PaymentHistoryService } from './payment-history.service';
import { paymentItem } from './payment-items';

const NO_WALLET = 'Missing X-Wallet-Address, or not 0x followed by 40 hexadecimal characters';

/** The address is a lookup key, not proof of ownership: what it shows is public on chain anyway. */
@ApiTags('agents')
@ApiSecurity('wallet')
@UseGuards(WalletGuard)
@Controller('agents/me')
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly history: PaymentHistoryService,
  ) {}

  @Get()
  @ApiResponse({ status: 200, type: AgentProfileView, description: 'Totals of confirmed payments; zeros for a wallet that never paid.' })
  @ApiResponse({ status: 401, description: NO_WALLET })
  profile(@CurrentWallet() wallet: `0x${string}`): Promise<AgentProfileView> {
    return this.agents.profile(wallet);
  }

  @Get('payments')
  @ApiPageQueries()
  @ApiResponse({ status: 200, type: PaymentPageView, description: 'Confirmed payments, newest first.' })
  @ApiResponse({ status: 401, description: NO_WALLET })
  payments(@CurrentWallet() wallet: `0x${string}`, @Query('limit') limit: unknown, @Query('cursor') cursor: unknown): Promise<PaymentPageView> {
    return this.history.page({ payer: wallet }, parsePageRequest({ limit, cursor }), paymentItem);
  }
}
