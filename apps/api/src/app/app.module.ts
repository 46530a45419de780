import { DynamicModule, Module, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule, ThrottlerStorage } from '@nestjs/throttler';
import { AccessTokenService } from '../access-tokens/access-token.service';
import { AccessTokensController } from '../access-tokens/access-tokens.controller';
import type { ChainContext } from '../chain/chain-context';
import { SignerKeys } from '../chain/signer-keys';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import { SecretBox } from '../crypto/secret-box';
import type { Database } from '../db/database';
import { CONFIG, DATABASE, SECRET_BOX } from '../db/tokens';
import { FaucetController } from '../dev/faucet.controller';
import { GateCounterService } from '../gates/gate-counter.service';
import { GateCountsController } from '../gates/gate-counts.controller';
import { GatesController } from '../gates/gates.controller';
import { GatesService } from '../gates/gates.service';
import { HealthController } from '../health/health.controller';
import { BackgroundJobs } from './background-jobs';
import { PaymentsController } from '../payments/payments.controller';
import { PaymentsService } from '../payments/payments.service';
import { PaymentStore } from '../payments/payment.store';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { SimulationBudget } from '../payments/simulation-budget';
import { ForgedGateBudget } from '../rate-limit/forged-gates';
import { ChannelStore } from '../batch-settlement/channel.store';
import { ClaimerService } from '../batch-settlement/claimer.service';
import { ClaimerHeartbeatStore } from '../batch-settlement/claimer-heartbeat.store';
import { RelayerDepositsService } from '../batch-settlement/relayer-deposits.service';
import { StuckAheadService } from '../batch-settlement/stuck-ahead.service';
import { SiteChannelsController } from '../batch-settlement/site-channels.controller';
import { RefundsService } from '../batch-settlement/refunds.service';
import { VoucherPaymentsService } from '../batch-settlement/voucher-payments.service';
import { ReconcilerService } from '../payments/reconciler.service';
import { PricingController } from '../pricing/pricing.controller';
import { PricingService } from '../pricing/pricing.service';
import { SiteOfferController } from '../pricing/site-offer.controller';
import { PublishersController } from '../publishers/publishers.controller';
import { KnownNetworksStore } from '../publishers/known-networks.store';
import { PasswordAttemptsStore } from '../publishers/password-attempts.store';
import { PayoutAddressStore } from '../publishers/payout-address.store';
import { PublishersService } from '../publishers/publishers.service';
import { CredentialThrottlerGuard } from '../rate-limit/credential-throttler.guard';
import { DEFAULT_LIMIT } from '../rate-limit/limits';
import { trackByCredential } from '../rate-limit/trackers';
import { ReportingModule } from '../reporting/reporting.module';
import { CrawlersModule } from '../crawlers/crawlers.module';
import { BotPolicyModule } from '../bot-policy/bot-policy.module';
import { SiteSecretsService } from '../sites/site-secrets.service';
import { SitesController } from '../sites/sites.controller';
import { SitesService } from '../sites/sites.service';
import { SiwxController } from '../siwx/siwx.controller';
import { SiwxService } from '../siwx/siwx.service';
import { SiwxStore } from '../siwx/siwx.store';
import { SitePaymentTermsStore } from '../sites/site-payment-terms.store';

export interface AppDependencies {
  config: AppConfig;
  database: Database;
  chain: ChainContext;
  masterKey: Buffer;
  /** Rate-limit storage; in-process unless Redis is configured. */
  limiterStorage: ThrottlerStorage;
}

/** What every module may inject: configuration, database, chain, secrets, sites and tokens. */
@Module({})
class FoundationModule {
  static create(deps: AppDependencies): DynamicModule {
    const providers = [
      { provide: CONFIG, useValue: deps.config },
      { provide: DATABASE, useValue: deps.database },
      { provide: CHAIN, useValue: deps.chain },
      { provide: SECRET_BOX, useValue: new SecretBox(deps.masterKey) },
      SiteSecretsService,
      SitesService,
      AccessTokenService,
    ];
    return {
      module: FoundationModule,
      global: true,
      providers,
      exports: providers.map((p) => ('provide' in p ? p.provide : p)),
    };
  }
}

@Module({})
export class AppModule {
  static create(deps: AppDependencies): DynamicModule {
    const devControllers: Type[] = deps.chain.network.name === 'local' ? [FaucetController] : [];
    return {
      module: AppModule,
      imports: [
        FoundationModule.create(deps),
        ThrottlerModule.forRoot({
          throttlers: [{ name: 'default', ...DEFAULT_LIMIT }],
          getTracker: trackByCredential,
          storage: deps.limiterStorage,
        }),
        ReportingModule,
        CrawlersModule,
        BotPolicyModule,
      ],
      controllers: [
        HealthController,
        PublishersController,
        SitesController,
        PricingController,
        SiteOfferController,
        GatesController,
        GateCountsController,
        PaymentsController,
        AccessTokensController,
        SiwxController,
        SiteChannelsController,
        ...devControllers,
      ],
      providers: [
        { provide: APP_GUARD, useClass: CredentialThrottlerGuard },
        PublishersService,
        PasswordAttemptsStore,
        PayoutAddressStore,
        KnownNetworksStore,
        PricingService,
        GatesService,
        PaymentsService,
        PaymentStore,
        RelayRefusalsStore,
        SimulationBudget,
        ForgedGateBudget,
        ReconcilerService,
        GateCounterService,
        VoucherPaymentsService,
        { provide: SignerKeys, useValue: new SignerKeys() },
        RefundsService,
        ChannelStore,
        ClaimerHeartbeatStore,
        ClaimerService,
        StuckAheadService,
        RelayerDepositsService,
        BackgroundJobs,
        SiwxService,
        SiwxStore,
        SitePaymentTermsStore,
      ],
    };
  }
}
