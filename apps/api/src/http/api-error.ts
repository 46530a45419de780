import type { ApiErrorBody } from '@crawlgate/core';
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
  }
}

export const badRequest = (detail: string) => new ApiError(400, detail);
export const unauthorized = (detail: string) => new ApiError(401, detail);
export const notFound = (detail: string) => new ApiError(404, detail);
export const conflict = (detail: string) => new ApiError(409, detail);
/** 503; `retryAfterSeconds` tells clients (the agent SDK waits for it) when to send the same request again. */
export const unavailable = (detail: string, retryAfterSeconds?: number) =>
  new ApiError(503, detail, {}, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });
