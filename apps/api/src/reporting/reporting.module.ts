import { Module } from '@nestjs/common';
import { AgentsController } from './agents.controller';
import { AgentsService } from './agents.service';
import { PaymentHistoryService } from './payment-history.service';
import { SiteReportsController } from './site-reports.controller';
import { SiteStatsService } from './site-stats.service';

/** Read-only views of payments: agent profiles and history, site stats and payments. */
@Module({
  controllers: [AgentsController, SiteReportsController],
  providers: [AgentsService, SiteStatsService, PaymentHistoryService],
})
export class ReportingModule {}
