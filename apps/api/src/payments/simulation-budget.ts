import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import type { Gate } from '../gates/gates.service';
import { ApiError } from '../http/api-error';
import { HeldOff } from '../rate-limit/held-off';
import {
  REFUSED_SIMULATIONS_PER_PUBLISHER,
  REFUSED_SIMULATIONS_PER_SITE,
  SIMULATIONS_IN_FLIGHT_PER_PAYER,
  SIMULATIONS_IN_FLIGHT_PER_SITE,
} from '../rate-limit/limits';
import { SitePaymentTermsStore } from '../sites/site-payment-terms.store';
import { isSignedByFromKey, type SignedAuthorization } from './authorization-checks';
import { neverConnected } from './chain-errors';
import { PaymentStore } from './payment.store';

/**
 * How recently a payer must have paid the held-off site's publisher (a payment to one of its sites
 * settled on this chain and token) to have its authorizations simulated while that site is held
 * off: a fresh key signing for itself costs nothing to make, and a payment to a site of one's own
 * (priced at a millionth of a dollar, paid back to oneself) would cost next to nothing; a payment
 * to this publisher costs at least its price, paid to it.
 */
export const KNOWN_PAYER_WINDOW_MS = 30 * 24 * 3_600_000;

/** Sites whose publisher one instance remembers (a site never changes publisher); the oldest go first. */
const MAX_REMEMBERED_SITES = 10_000;

type HoldOff = { ms: number; by: 'site' | 'publisher' };

/**
 * What the simulations of EIP-3009 authorizations (one eth_call each, and junk costs its sender
 * nothing: gates are free) may spend, per site and per publisher: at most
 * SIMULATIONS_IN_FLIGHT_PER_SITE at once per site and SIMULATIONS_IN_FLIGHT_PER_PAYER per payer in
 * this instance (so one payer's slow calls cannot fill a site's); and past
 * REFUSED_SIMULATIONS_PER_SITE or REFUSED_SIMULATIONS_PER_PUBLISHER refusals a minute, only
 * authorizations a known payer signed with its own key until the minute is over. Every answer it
 * gives is a refusal, nothing charged: none lets a payment through, and a count the storage fails to
 * take is lost, never put in place of the payment's own answer.
 */
@Injectable()
export class SimulationBudget {
  /** Sites and publishers past their refusals' budget, as this instance last counted. */
  private readonly refusingSites = new HeldOff();
  private readonly refusingPublishers = new HeldOff();
  /** Simulations running now, per site and per payer, in this instance. */
  private readonly inFlightPerSite = new Map<string, number>();
  private readonly inFlightPerPayer = new Map<string, number>();
  private readonly publishers = new Map<string, string>();

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly payments: PaymentStore,
    private readonly sites: SitePaymentTermsStore,
    @InjectThrottlerStorage() private readonly buckets: ThrottlerStorage,
  ) {}

  /**
   * While the gate's site or its publisher is held off, only an authorization signed with its
   * payer's own key (recovered locally: this costs CPU only then) by a payer that paid this
   * publisher within KNOWN_PAYER_WINDOW_MS goes on to the chain; another (a smart wallet's, a fresh
   * key's, one known only to other publishers, junk) is 429, nothing charged.
   */
  async assertMaySimulate(gate: Pick<Gate, 'siteId' | 'chainId' | 'asset'>, auth: SignedAuthorization): Promise<void> {
    const holdOff = await this.holdOffOf(gate.siteId);
    if (holdOff.ms === 0 || (await this.isPublishersPayerSigning(gate, auth))) return;
    throw heldOffAnswer(
      holdOff,
      `only payers signing with their own key that paid this site's publisher on this network in the last ${KNOWN_PAYER_WINDOW_MS / 86_400_000} days are checked on chain`,
    );
  }

  /**
   * Runs `simulate` in one of the site's SIMULATIONS_IN_FLIGHT_PER_SITE slots and one of the payer's
   * SIMULATIONS_IN_FLIGHT_PER_PAYER; with either full, 429 and no chain call. A failure counts
   * against the site and its publisher, a timeout included (a smart wallet's signature check can
   * run until the call times out), but not one whose connection to the node never opened: no payer
   * makes a node refuse connections, and counted, an outage would hold busy sites off after it.
   */
  async simulating<T>(siteId: string, payer: string, simulate: () => Promise<T>): Promise<T> {
    payer = payer.toLowerCase();
    this.takeSlots(siteId, payer);
    try {
      return await simulate().catch(async (error: unknown) => {
        if (!neverConnected(error)) await this.countRefused(siteId);
        throw error;
      });
    } finally {
      release(this.inFlightPerSite, siteId);
      release(this.inFlightPerPayer, payer);
    }
  }

  /**
   * A contract wallet's signature of a transfer proof, checked as an authorization is simulated
   * (calls into code anyone can deploy, and a proof costs nothing to send): in the site's and the
   * payer's slots, and a refusal counted against both. While the site or its publisher is held
   * off, only the payer a proof names (`named`: one check a proof, not one for each payer of its
   * transaction) is checked, and any other is 429 without a call: its money has moved, and junk
   * anyone sends must not keep it from its token. A payer signing with its own key is recovered
   * locally and never comes here.
   */
  async checkingContractPayer<T>(siteId: string, payer: string, named: boolean, check: () => Promise<T>): Promise<T> {
    const holdOff = await this.holdOffOf(siteId);
    if (holdOff.ms > 0 && !named)
      throw heldOffAnswer(
        holdOff,
        'a transfer proof is checked against a contract wallet only when it names it (`payer`)',
      );
    const signed = await this.simulating(siteId, payer, check);
    if (signed === false) await this.countRefused(siteId);
    return signed;
  }

  /** One more authorization for the site's gates refused, by its simulation or its payer's relay record; past a budget, its site or publisher is held off here. */
  async countRefused(siteId: string): Promise<void> {
    await Promise.all([this.countRefusedForSite(siteId), this.countRefusedForPublisher(siteId)]);
  }

  private async countRefusedForSite(siteId: string): Promise<void> {
    await this.spend(`RefusedSimulations-site:${siteId}`, REFUSED_SIMULATIONS_PER_SITE, this.refusingSites, siteId);
  }

  private async countRefusedForPublisher(siteId: string): Promise<void> {
    const publisherId = await this.publisherOf(siteId);
    if (!publisherId) return;
    const key = `RefusedSimulations-publisher:${publisherId}`;
    await this.spend(key, REFUSED_SIMULATIONS_PER_PUBLISHER, this.refusingPublishers, publisherId);
  }

  /** One from the shared bucket `key`; once it answers "over", `heldOff` holds `name` off until it resets. */
  private async spend(
    key: string,
    { limit, ttl }: { limit: number; ttl: number },
    heldOff: HeldOff,
    name: string,
  ): Promise<void> {
    const hits = await this.buckets.increment(key, ttl, limit, ttl, 'default').catch(() => undefined);
    if (hits?.isBlocked) heldOff.holdOff(name, Date.now() + hits.timeToBlockExpire * 1000);
  }

  /** The longer of the site's and its publisher's hold-offs; the publisher is looked up only while one is held off. */
  private async holdOffOf(siteId: string): Promise<HoldOff> {
    const site: HoldOff = { ms: this.refusingSites.heldOffFor(siteId), by: 'site' };
    if (!this.refusingPublishers.holdsAny()) return site;
    const publisherId = await this.publisherOf(siteId);
    const publisher: HoldOff = {
      ms: publisherId ? this.refusingPublishers.heldOffFor(publisherId) : 0,
      by: 'publisher',
    };
    return publisher.ms > site.ms ? publisher : site;
  }

  /** A signature recovered to the payer (no chain call) of a payer that paid the site's publisher lately; a failed read knows no one. */
  private async isPublishersPayerSigning(
    gate: Pick<Gate, 'siteId' | 'chainId' | 'asset'>,
    auth: SignedAuthorization,
  ): Promise<boolean> {
    if (!(await isSignedByFromKey(this.chain, auth))) return false;
    const publisherId = await this.publisherOf(gate.siteId);
    if (!publisherId) return false;
    const payer = { chainId: gate.chainId, asset: gate.asset, payer: auth.from, publisherId };
    return this.payments.hasPaidPublisherWithin(payer, KNOWN_PAYER_WINDOW_MS).catch(() => false);
  }

  /** The site's publisher, remembered once read; null when it cannot be read (a deleted site, a storage failure). */
  private async publisherOf(siteId: string): Promise<string | null> {
    const remembered = this.publishers.get(siteId);
    if (remembered) return remembered;
    const publisherId = await this.sites.publisherOf(siteId).catch(() => null);
    if (publisherId) this.rememberPublisher(siteId, publisherId);
    return publisherId;
  }

  private rememberPublisher(siteId: string, publisherId: string): void {
    if (this.publishers.size >= MAX_REMEMBERED_SITES) this.publishers.delete(this.publishers.keys().next().value!);
    this.publishers.set(siteId, publisherId);
  }

  private takeSlots(siteId: string, payer: string): void {
    const site = this.inFlightPerSite.get(siteId) ?? 0;
    if (site >= SIMULATIONS_IN_FLIGHT_PER_SITE) throw inFlightFull('site');
    const ofPayer = this.inFlightPerPayer.get(payer) ?? 0;
    if (ofPayer >= SIMULATIONS_IN_FLIGHT_PER_PAYER) throw inFlightFull('payer');
    this.inFlightPerSite.set(siteId, site + 1);
    this.inFlightPerPayer.set(payer, ofPayer + 1);
  }
}

/** One slot of `key` given back; a key with none left is forgotten, so the map holds only what runs. */
function release(inFlight: Map<string, number>, key: string): void {
  const running = (inFlight.get(key) ?? 1) - 1;
  if (running > 0) inFlight.set(key, running);
  else inFlight.delete(key);
}

const inFlightFull = (whose: 'site' | 'payer') =>
  new ApiError(
    429,
    whose === 'site'
      ? `${SIMULATIONS_IN_FLIGHT_PER_SITE} payments to this site's gates are being checked on chain at once, the most taken at a time: nothing was charged, retry shortly`
      : `${SIMULATIONS_IN_FLIGHT_PER_PAYER} payments from this payer are being checked on chain at once, the most taken at a time: nothing was charged, retry shortly`,
    {},
    { 'retry-after': '1' },
  );

/** `meanwhile`: what is (not) checked until the hold-off passes. */
function heldOffAnswer({ ms, by }: HoldOff, meanwhile: string): ApiError {
  const { limit, ttl } = by === 'site' ? REFUSED_SIMULATIONS_PER_SITE : REFUSED_SIMULATIONS_PER_PUBLISHER;
  const whose = by === 'site' ? "this site's gates" : "the gates of this site's publisher, across its sites,";
  return new ApiError(
    429,
    `More than ${limit} payments to ${whose} were refused in ${ttl / 60_000} minute; until that passes, ${meanwhile}: nothing was charged, retry later`,
    {},
    { 'retry-after': String(Math.ceil(ms / 1000)) },
  );
}
