import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { CONFIG } from '../db/tokens';
import { ClaimerService } from '../batch-settlement/claimer.service';
import { RefundsService } from '../batch-settlement/refunds.service';
import { RelayerDepositsService } from '../batch-settlement/relayer-deposits.service';
import { CrawlerRetentionService } from '../crawlers/crawler-retention.service';
import { ReconcilerService } from '../payments/reconciler.service';
import { KnownNetworksStore } from '../publishers/known-networks.store';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { PasswordAttemptsStore } from '../publishers/password-attempts.store';

/** How often crawler analytics older than the retention are deleted: days are its unit. */
const CRAWLER_RETENTION_INTERVAL_MS = 6 * 3_600_000;
/**
 * How often password-attempt counters whose window and block are over are deleted (their window is
 * 15 minutes), and the networks logged in from that expired.
 */
const PASSWORD_ATTEMPTS_SWEEP_MS = 15 * 60_000;

/**
 * Runs the reconciler, the sweep of refund holds that are over, the one of relayer deposits on
 * their way, the voucher claimer, the
 * crawler analytics retention and the sweep of password-attempt counters on their intervals; a run
 * never overlaps the previous one, and shutdown waits for the runs in flight.
 */
@Injectable()
export class BackgroundJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Jobs');
  private readonly timers: NodeJS.Timeout[] = [];
  /** The runs in flight, awaited at shutdown. */
  private readonly running = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly reconciler: ReconcilerService,
    private readonly claimer: ClaimerService,
    private readonly refunds: RefundsService,
    private readonly deposits: RelayerDepositsService,
    private readonly crawlerRetention: CrawlerRetentionService,
    private readonly passwordAttempts: PasswordAttemptsStore,
    private readonly knownNetworks: KnownNetworksStore,
    private readonly relayRefusals: RelayRefusalsStore,
  ) {}

  onApplicationBootstrap(): void {
    this.every(this.config.chain.reconcileIntervalMs, 'reconciler', () => this.reconciler.runOnce());
    this.every(this.config.chain.reconcileIntervalMs, 'refund holds', () => this.refunds.endHoldsOver());
    // Deposits are followed as often: like a refund, a deposit is sent by a request that may stop
    // waiting for it, and stuck it holds every later relayer nonce. A job of their own, so a refund
    // sweep that fails or is slow holds no deposit back; the claimer's runs are minutes apart.
    this.every(this.config.chain.reconcileIntervalMs, 'relayer deposits', () => this.deposits.followOnTheirWay());
    // At start too: it collects what an instance that stopped left unclaimed, and vouchers are judged
    // on remembered channel states only once a claimer run has finished (ClaimerService.keepsUp).
    this.every(this.config.chain.batchSettlement.claimIntervalMs, 'claimer', () => this.claimer.runOnce(), true);
    this.every(
      CRAWLER_RETENTION_INTERVAL_MS,
      'crawler analytics retention',
      () => this.crawlerRetention.runOnce(),
      true,
    );
    this.every(PASSWORD_ATTEMPTS_SWEEP_MS, 'sweep of rows that are over', async () => {
      await this.passwordAttempts.deleteOver();
      await this.knownNetworks.deleteExpired();
      await this.relayRefusals.deleteOver();
    });
  }

  /**
   * Waits for the runs in flight: one left running after the app closed keeps its job's advisory
   * lock, so the next instance's run is skipped, and it works on a database about to be closed.
   */
  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all(this.running);
  }

  private every(intervalMs: number, name: string, job: () => Promise<unknown>, atStart = false): void {
    if (intervalMs <= 0) return;
    let run: Promise<unknown> | undefined;
    const tick = () => {
      if (run || this.stopping) return;
      run = job()
        .catch((error: Error) => this.logger.warn(`${name} failed: ${error.message}`))
        .finally(() => {
          this.running.delete(run!);
          run = undefined;
        });
      this.running.add(run);
    };
    const timer = setInterval(tick, intervalMs);
    timer.unref();
    this.timers.push(timer);
    if (atStart) tick();
  }
}
