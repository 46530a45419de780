import { Module } from '@nestjs/common';
import { CrawlersController } from './crawlers.controller';
import { CrawlersService } from './crawlers.service';

/** Crawler analytics: the counts the middleware reports, read per crawler and per day. */
@Module({ controllers: [CrawlersController], providers: [CrawlersService] })
export class CrawlersModule {}
