import { DeadlineError, withinDeadline } from '@crawlgate/core';
import { Controller, Get, Inject, Logger, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import type { ChainContext } from '../chain/chain-context';
import { readChain } from '../chain/chain-health';
import { CHAIN } from '../chain/tokens';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { Unlimited } from '../rate-limit/limits';
import { RedisThrottlerStorage } from '../rate-limit/redis-throttler.storage';

class DatabaseHealthView {
  @ApiProperty({ enum: ['up', 'down'] }) status!: 'up' | 'down';
  @ApiProperty({ enum: ['pglite', 'postgres'] }) kind!: Database['kind'];
  @ApiPropertyOptional() latency_ms?: number;
  @ApiPropertyOptional() error?: string;
}

class RelayerHealthView {
  @ApiProperty({ description: 'The address that pays every settlement’s gas' }) address!: string;
  @ApiPropertyOptional({ description: 'Its balance, in wei (decimal string)' }) balance_wei?: string;
  @ApiPropertyOptional({
    description: 'How many settlements that balance pays for at today’s gas price (100,000 gas each)',
  })
  settlements_left?: string;
  @ApiPropertyOptional({ description: 'Fewer than 1,000 settlements left: top the relayer up' }) low?: boolean;
}

class ChainHealthView {
  @ApiProperty({ enum: ['up', 'down'] }) status!: 'up' | 'down';
  @ApiProperty({ example: 'base' }) network!: string;
  @ApiPropertyOptional({ description: 'The latest block’s number' }) block?: number;
  @ApiPropertyOptional({ description: 'How old the latest block is, by this server’s clock' })
  block_age_seconds?: number;
  @ApiPropertyOptional() latency_ms?: number;
  @ApiProperty({ type: RelayerHealthView }) relayer!: RelayerHealthView;
  @ApiPropertyOptional() error?: string;
}

class HealthView {
  @ApiProperty({
    enum: ['ok', 'degraded', 'unavailable'],
    description:
      'degraded: shared rate limits fell back to this process, the chain’s node does not answer (payments cannot settle; gates and token checks still work), or the relayer is low on gas',
  })
  status!: string;
  @ApiProperty({ example: '0.1.0' }) version!: string;
  @ApiProperty({ type: DatabaseHealthView }) database!: DatabaseHealthView;
  @ApiProperty({ type: ChainHealthView, description: 'Read at most every 5 s, whoever asks' })
  chain!: ChainHealthView;
  @ApiProperty({ enum: ['in-process', 'redis', 'in-process-fallback'] }) rate_limits!: string;
  @ApiPropertyOptional({ description: 'Why it is unavailable (503 only): every error body has a detail' })
  detail?: string;
}

/** How long one reading of the chain answers every health check: the endpoint is open, its RPC calls are metered. */
const CHAIN_READING_TTL_MS = 5_000;
const CHECK_TIMEOUT_MS = 2_000;

@ApiTags('health')
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');
  private chainReading?: { at: number; view: Promise<ChainHealthView> };

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(ThrottlerStorage) private readonly limiterStorage: ThrottlerStorage,
  ) {}

  @Get()
  @Unlimited()
  @ApiOperation({ summary: 'Whether the API can serve requests' })
  @ApiResponse({ status: 200, type: HealthView, description: 'Everything needed to serve requests is up' })
  @ApiResponse({ status: 503, type: HealthView, description: 'The database is unreachable' })
  async health(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthView> {
    const [database, chain] = await Promise.all([this.pingDatabase(), this.chainHealth()]);
    const rateLimits = this.limiterStorage instanceof RedisThrottlerStorage ? this.limiterStorage.status : 'in-process';
    const ok = database.status === 'up';
    const degraded = rateLimits === 'in-process-fallback' || chain.status === 'down' || chain.relayer.low === true;
    reply.status(ok ? 200 : 503);
    return {
      status: ok ? (degraded ? 'degraded' : 'ok') : 'unavailable',
      version: '0.1.0',
      database,
      chain,
      rate_limits: rateLimits,
      ...(ok ? {} : { detail: 'The database is unavailable; retry later' }),
    };
  }

  /** The chain as last read, read again once CHAIN_READING_TTL_MS old; concurrent checks share one reading. */
  private chainHealth(): Promise<ChainHealthView> {
    const now = performance.now();
    if (!this.chainReading || now - this.chainReading.at >= CHAIN_READING_TTL_MS)
      this.chainReading = { at: now, view: this.readChain() };
    return this.chainReading.view;
  }

  private async readChain(): Promise<ChainHealthView> {
    const network = this.chain.network.name;
    const started = performance.now();
    try {
      const reading = await withinDeadline(readChain(this.chain), CHECK_TIMEOUT_MS);
      return {
        status: 'up',
        network,
        block: reading.block,
        block_age_seconds: reading.blockAgeSeconds,
        latency_ms: Math.round((performance.now() - started) * 10) / 10,
        relayer: {
          address: reading.relayer.address,
          balance_wei: reading.relayer.balanceWei,
          settlements_left: reading.relayer.settlementsLeft,
          low: reading.relayer.low,
        },
      };
    } catch (error) {
      // Never the RPC error's text: it can carry the node's URL, and a hosted node's URL holds its key.
      const reason = error instanceof DeadlineError ? error.message : 'the node did not answer';
      return { status: 'down', network, relayer: { address: this.chain.relayer.account.address }, error: reason };
    }
  }

  private async pingDatabase(): Promise<{
    status: 'up' | 'down';
    kind: Database['kind'];
    latency_ms?: number;
    error?: string;
  }> {
    const started = performance.now();
    try {
      await withinDeadline(this.db.sql.query('SELECT 1'), CHECK_TIMEOUT_MS);
      return { status: 'up', kind: this.db.kind, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
    } catch (error) {
      // Never the driver's text to an anonymous caller: it can name the database's host, port and user.
      this.logger.warn(`the database check failed: ${(error as Error).message}`);
      const reason = error instanceof DeadlineError ? error.message : 'the database did not answer';
      return { status: 'down', kind: this.db.kind, error: reason };
    }
  }
}
