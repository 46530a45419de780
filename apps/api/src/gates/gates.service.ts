import { Inject, Injectable } from '@nestjs/common';
import { requestPath } from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import type { Database } from '../db/database';
import { CONFIG, DATABASE } from '../db/tokens';
import type { SiteWithPayout } from '../auth/request-context';
import type { Gate } from '../generated/prisma/client';
import { conflict, notFound } from '../http/api-error';
import { isUuid } from '../http/ids';
import { PricingService } from '../pricing/pricing.service';
import { gateOffer, type GateOffer } from './gate-offer';
import { insertGate } from './gate-store';

export const GATE_NOT_FOUND = 'Gate not found or expired';

export type GateCreation = { kind: 'free'; url: string } | { kind: 'priced'; offer: GateOffer };

@Injectable()
export class GatesService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly pricing: PricingService,
  ) {}

  async create(site: SiteWithPayout, url: string, baseUrl: string): Promise<GateCreation> {
    const path = requestPath(url);
    const { micros } = (await this.pricing.table(site)).resolve(path);
    if (micros === 0n) return { kind: 'free', url: path };
    const payTo = site.publisher.payoutAddress;
    if (!payTo) throw conflict('This site cannot charge yet: its publisher has no payout address (set payout_address with PATCH /v1/publishers/me)');
    const gate = await insertGate(this.db.sql, {
      id: randomUUID(),
      siteId: site.id,
      url: path,
      resource: /^https?:\/\//.test(url) ? url : `https://${site.domain}${url}`,
      priceMicros: micros,
      network: this.chain.network.name,
      chainId: this.chain.chainId,
      asset: this.chain.usdc,
      payTo,
      expiresAt: new Date(Date.now() + this.config.gateTtlSeconds * 1000),
    });
    return { kind: 'priced', offer: this.offer(gate, site.domain, baseUrl) };
  }

  /** A gate that can still be paid or was paid; unknown and expired ones are 404 alike. */
  async findLive(id: string): Promise<Gate> {
    const gate = isUuid(id) ? await this.db.prisma.gate.findUnique({ where: { id } }) : null;
    if (!gate || isExpired(gate)) throw notFound(GATE_NOT_FOUND);
    return gate;
  }

  offer(gate: Gate, domain: string, baseUrl: string): GateOffer {
    return gateOffer(gate, this.chain, baseUrl, `Access to ${gate.url} on ${domain}`);
  }

  async view(id: string, baseUrl: string): Promise<GateOffer & { paid_at: string | null; tx_hash: string | null }> {
    const gate = await this.findLive(id);
    const [site, payment] = await Promise.all([
      this.db.prisma.site.findUnique({ where: { id: gate.siteId }, select: { domain: true } }),
      gate.status === 'paid' ? this.db.prisma.payment.findUnique({ where: { gateId: gate.id }, select: { txHash: true } }) : null,
    ]);
    return { ...this.offer(gate, site?.domain ?? '', baseUrl), paid_at: gate.paidAt?.toISOString() ?? null, tx_hash: payment?.txHash ?? null };
  }
}

/** Unpaid gates past their expiry are expired even before the sweeper marks them. */
export function isExpired(gate: Pick<Gate, 'status' | 'expiresAt'>, now = Date.now()): boolean {
  return gate.status === 'expired' || (gate.status === 'open' && gate.expiresAt.getTime() <= now);
}
