import type { ApiErrorBody, GateNotCharging } from '@crawlgate/core';
import { HttpException } from '@nestjs/common';

/** An error answered as `{detail, ...extra}` with `status`; every handled failure is one of these. */
export class ApiError extends HttpException {
  constructor(
    status: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super({ detail, ...extra } satisfies ApiErrorBody, status);
    // Nest's message would be "Api Error": a background job logging one (a relayer call refused) says why.
    this.message = detail;
  }
}

export const badRequest = (detail: string) => new ApiError(400, detail);
export const unauthorized = (detail: string) => new ApiError(401, detail);
export const notFound = (detail: string) => new ApiError(404, detail);
export const conflict = (detail: string) => new ApiError(409, detail);
/** 503; `retryAfterSeconds` tells clients (the agent SDK waits for it) when to send the same request again. */
export const unavailable = (detail: string, retryAfterSeconds?: number) =>
  new ApiError(503, detail, {}, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });
/**
 * 503 for a request that took nothing (`charged: false`, core's GateNotCharging): the same payment
 * sent again after `retryAfterSeconds` is safe, and the middleware tells its payer so, where any
 * other 503 to a payment may follow its settlement (and is answered as pending).
 */
export const notCharged = (detail: string, retryAfterSeconds: number) =>
  new ApiError(503, detail, { charged: false } satisfies Omit<GateNotCharging, 'detail'>, {
    'retry-after': String(retryAfterSeconds),
  });
