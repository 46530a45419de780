import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule, ThrottlerStorage } from '@nestjs/throttler';
import type { AppConfig } from '../config/config';
import { SecretBox } from '../crypto/secret-box';
import type { Database } from '../db/database';
import { CONFIG, DATABASE, SECRET_BOX } from '../db/tokens';
import { HealthController } from '../health/health.controller';
import { PricingController } from '../pricing/pricing.controller';
import { PricingService } from '../pricing/pricing.service';
import { PublishersController } from '../publishers/publishers.controller';
import { PublishersService } from '../publishers/publishers.service';
import { DEFAULT_LIMIT } from '../rate-limit/limits';
import { trackByCredential } from '../rate-limit/trackers';
import { SiteSecretsService } from '../sites/site-secrets.service';
import { SitesController } from '../sites/sites.controller';
import { SitesService } from '../sites/sites.service';

export interface AppDependencies {
  config: AppConfig;
  database: Database;
  masterKey: Buffer;
  /** Rate-limit storage; in-process unless Redis is configured. */
  limiterStorage: ThrottlerStorage;
}

@Module({})
export class AppModule {
  static create(deps: AppDependencies): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [{ name: 'default', ...DEFAULT_LIMIT }],
          getTracker: trackByCredential,
          storage: deps.limiterStorage,
        }),
      ],
      controllers: [HealthController, PublishersController, SitesController, PricingController],
      providers: [
        { provide: CONFIG, useValue: deps.config },
        { provide: DATABASE, useValue: deps.database },
        { provide: SECRET_BOX, useValue: new SecretBox(deps.masterKey) },
        { provide: APP_GUARD, useClass: ThrottlerGuard },
        PublishersService,
        SitesService,
        SiteSecretsService,
        PricingService,
      ],
    };
  }
}
