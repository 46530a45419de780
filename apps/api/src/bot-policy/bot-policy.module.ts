import { Module } from '@nestjs/common';
import { BotPolicyController } from './bot-policy.controller';
import { BotPolicyService } from './bot-policy.service';

/** The bot policy a publisher sets per site; exported for GET /v1/site, which carries it to the middleware. */
@Module({ controllers: [BotPolicyController], providers: [BotPolicyService], exports: [BotPolicyService] })
export class BotPolicyModule {}
