import { Module } from '@nestjs/common';
import { CrawlerRetentionService } from './crawler-retention.service';
import { CrawlersController } from './crawlers.controller';
import { CrawlersService } from './crawlers.service';

/** Crawler analytics: the counts the middleware reports, read per crawler and per day, kept for the retention. */
@Module({
  controllers: [CrawlersController],
  providers: [CrawlersService, CrawlerRetentionService],
  exports: [CrawlerRetentionService],
})
export class CrawlersModule {}
