import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { LimitPerGate } from '../rate-limit/limits';
import { PaidView, PendingView, VerifyPaymentDto } from './payments.dto';
import { PaymentsService } from './payments.service';

@ApiTags('payments')
@Controller('gates/:id/verify')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @LimitPerGate(50)
  @ApiResponse({ status: 200, type: PaidView, description: 'Settled on chain; the access token opens the gate’s path for 30 minutes. The same proof again returns the same result.' })
  @ApiResponse({ status: 202, type: PendingView, description: 'Sent but not confirmed in time; finished in the background. Retry after Retry-After.' })
  @ApiResponse({ status: 402, description: 'The proof does not pay this gate: `{detail, reason}` with an x402 reason code.' })
  @ApiResponse({ status: 404, description: 'Gate not found or expired' })
  @ApiResponse({ status: 409, description: 'The proof was used for another gate, the gate is paid by another proof, or the x402 payment-identifier was used by this payer on this site with another payment.' })
  @ApiResponse({ status: 503, description: 'The chain is unreachable; nothing was charged and the gate stays payable.' })
  async verify(@Param('id') id: string, @Body() body: VerifyPaymentDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<PaidView | PendingView> {
    const outcome = await this.payments.verify(id, body);
    void reply.header('cache-control', 'no-store');
    if (outcome.kind === 'pending') void reply.status(202).header('retry-after', '5');
    else void reply.status(200);
    return outcome.body;
  }
}
