import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForgedGate } from '../gates/gates.service';
import { ForgedGateBudget } from '../rate-limit/forged-gates';
import { LimitPerGate } from '../rate-limit/limits';
import { PaidView, PaymentRejectedView, PendingView, RefundedView, VerifyPaymentDto } from './payments.dto';
import { PaymentsService } from './payments.service';

@ApiTags('payments')
@ApiExtraModels(PaidView, RefundedView)
@Controller('gates/:id/verify')
export class PaymentsController {
  constructor(
    private readonly payments: PaymentsService,
    private readonly forgedGates: ForgedGateBudget,
  ) {}

  @Post()
  @LimitPerGate(50)
  @ApiOperation({ summary: 'Pay a gate: an x402 payment, or a USDC transfer already sent; an access token' })
  @ApiResponse({
    status: 200,
    schema: { oneOf: [{ $ref: getSchemaPath(PaidView) }, { $ref: getSchemaPath(RefundedView) }] },
    description:
      'Settled on chain (`status: paid`); the access token opens the gate’s path for 30 minutes. The same proof again returns the same result. For x402’s batch-settlement refund payload, `status: refunded`: the channel’s rest went back to its payer and the gate stays unpaid.',
  })
  @ApiResponse({
    status: 202,
    type: PendingView,
    description: 'Sent but not confirmed in time; finished in the background. Retry after Retry-After.',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before sending the same proof again',
        schema: { type: 'integer', minimum: 0 },
      },
    },
  })
  @ApiResponse({
    status: 402,
    type: PaymentRejectedView,
    description: 'The proof does not pay this gate; nothing was charged.',
  })
  @ApiResponse({ status: 404, description: 'Gate not found or expired' })
  @ApiResponse({
    status: 409,
    description:
      'The proof was used for another gate, the gate is paid by another proof, the x402 payment-identifier was used by this payer on this site with another payment, the gate pays a payout address its publisher has since replaced (a transfer: one mined before the change stands), or the site’s prices rose since the gate was offered.',
  })
  @ApiResponse({
    status: 414,
    description:
      'The gate’s path is longer than any access token can carry (a gate no middleware should mint); nothing was charged.',
  })
  @ApiResponse({
    status: 410,
    description: 'The payment settled, but its site was deleted, so no access token can be issued',
  })
  @ApiResponse({
    status: 503,
    description:
      'The chain or the database is unreachable, or another payment of the payer holds its turn: send the same payment again shortly (a payment is settled at most once). When the detail says nothing was charged, nothing was; a database failure after the settlement was sent may leave it settling, and the same payment sent again answers for it.',
  })
  async verify(
    @Param('id') id: string,
    @Body() body: VerifyPaymentDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PaidView | PendingView | RefundedView> {
    // Made-up gate ids cost reads and each opens a bucket of the per-gate limit: counted per client.
    await this.forgedGates.assertNotHeldOff(request);
    const outcome = await this.payments.verify(id, body).catch(async (error: unknown) => {
      if (error instanceof ForgedGate) await this.forgedGates.count(request);
      throw error;
    });
    void reply.header('cache-control', 'no-store');
    if (outcome.kind === 'pending') void reply.status(202).header('retry-after', '5');
    else void reply.status(200);
    return outcome.body;
  }
}
