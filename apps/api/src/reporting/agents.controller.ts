import { Controller, Get, Query } from '@nestjs/common';
import type { AgentPaymentPage, AgentProfile } from '@crawlgate/core';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { WalletAuth, WalletProofAuth } from '../auth/authenticated';
import { CurrentWallet } from '../auth/request-context';
import { AgentProfileView } from './agents.dto';
import { AgentsService } from './agents.service';
import { ApiPageQueries, parsePageRequest } from './page-request';
import { PaymentPageView } from './payment-history.dto';
import { PaymentHistoryService } from './payment-history.service';
import { paymentItem } from './payment-items';

/**
 * The profile's address is a lookup key, not proof of ownership: its totals are public on chain
 * anyway. The history is not (the paths paid, the sites, gates and vouchers): it needs a proof that
 * the caller holds the wallet (X-Wallet-Proof).
 */
@ApiTags('agents')
@Controller('agents/me')
export class AgentsController {
  constructor(
    private readonly agents: AgentsService,
    private readonly history: PaymentHistoryService,
  ) {}

  @Get()
  @WalletAuth()
  @ApiOperation({ summary: 'Your wallet’s payment totals' })
  @ApiResponse({
    status: 200,
    type: AgentProfileView,
    description: 'Totals of confirmed payments; zeros for a wallet that never paid.',
  })
  profile(@CurrentWallet() wallet: `0x${string}`): Promise<AgentProfile> {
    return this.agents.profile(wallet);
  }

  @Get('payments')
  @WalletProofAuth()
  @ApiOperation({
    summary: 'Your wallet’s confirmed payments, newest first',
    description:
      'Needs X-Wallet-Proof besides X-Wallet-Address: the history shows what the chain does not (paths, sites, gates, vouchers).',
  })
  @ApiPageQueries()
  @ApiResponse({ status: 200, type: PaymentPageView, description: 'Confirmed payments, newest first.' })
  payments(
    @CurrentWallet() wallet: `0x${string}`,
    @Query('limit') limit: unknown,
    @Query('cursor') cursor: unknown,
  ): Promise<AgentPaymentPage> {
    return this.history.page({ payer: wallet }, parsePageRequest({ limit, cursor }), paymentItem);
  }
}
