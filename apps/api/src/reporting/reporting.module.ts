import { Module } from '@nestjs/common';
import { AgentsController } from './agents.controller';
import { AgentsService } from './agents.service';
import { PaymentHistoryService } from './payment-history.service';
import { PublisherReportsController } from './publisher-reports.controller';
import { SiteReportsController } from './site-reports.controller';
import { SiteStatsService } from './site-stats.service';

/** Read-only views of payments: agent profiles and history, site and publisher stats, site payments. */
@Module({
  controllers: [AgentsController, SiteReportsController, PublisherReportsController],
  providers: [AgentsService, SiteStatsService, PaymentHistoryService],
})
export class ReportingModule {}
