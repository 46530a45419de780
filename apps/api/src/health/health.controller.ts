import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
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

class HealthView {
  @ApiProperty({
    enum: ['ok', 'degraded', 'unavailable'],
    description: 'degraded: shared rate limits fell back to this process',
  })
  status!: string;
  @ApiProperty({ example: '0.1.0' }) version!: string;
  @ApiProperty({ type: DatabaseHealthView }) database!: DatabaseHealthView;
  @ApiProperty({ enum: ['in-process', 'redis', 'in-process-fallback'] }) rate_limits!: string;
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(ThrottlerStorage) private readonly limiterStorage: ThrottlerStorage,
  ) {}

  @Get()
  @Unlimited()
  @ApiOperation({ summary: 'Whether the API can serve requests' })
  @ApiResponse({ status: 200, type: HealthView, description: 'Everything needed to serve requests is up' })
  @ApiResponse({ status: 503, type: HealthView, description: 'The database is unreachable' })
  async health(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthView> {
    const database = await this.pingDatabase();
    const rateLimits = this.limiterStorage instanceof RedisThrottlerStorage ? this.limiterStorage.status : 'in-process';
    const ok = database.status === 'up';
    reply.status(ok ? 200 : 503);
    return {
      status: ok ? (rateLimits === 'in-process-fallback' ? 'degraded' : 'ok') : 'unavailable',
      version: '0.1.0',
      database,
      rate_limits: rateLimits,
    };
  }

  private async pingDatabase(): Promise<{
    status: 'up' | 'down';
    kind: Database['kind'];
    latency_ms?: number;
    error?: string;
  }> {
    const started = performance.now();
    try {
      await withTimeout(this.db.sql.query('SELECT 1'), 2000);
      return { status: 'up', kind: this.db.kind, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
    } catch (error) {
      return { status: 'down', kind: this.db.kind, error: (error as Error).message };
    }
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  );
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
