import type { ValidationItem } from './types';

export interface ApiErrorInit {
  /** HTTP status; 0 when no answer arrived (network failure or timeout). */
  status: number;
  detail: string | ValidationItem[];
  /** Seconds, from a Retry-After header. */
  retryAfter?: number;
  /** The parsed response body, when there was one. */
  body?: unknown;
  cause?: unknown;
}

/** Any failed call: an error status from the API, or no answer at all (status 0). */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  /** The API's `detail`: a message, or the list of validation problems of a 422. */
  readonly detail: string | ValidationItem[];
  /** The validation problems when `detail` is a list (422), else undefined. */
  readonly items?: ValidationItem[];
  readonly retryAfter?: number;
  readonly body?: unknown;

  constructor(init: ApiErrorInit) {
    super(describeDetail(init.detail), init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.detail = init.detail;
    if (Array.isArray(init.detail)) this.items = init.detail;
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
    if (init.body !== undefined) this.body = init.body;
  }
}

/** No answer within `timeoutMs`. A subclass, so `instanceof ApiError` still catches every failure. */
export class TimeoutError extends ApiError {
  override name = 'TimeoutError';
}

/**
 * The text to sign when the API refused a payout address because another publisher names it (its
 * 409's `payout_proof_message`): the address's EIP-191 signature of it, sent as `payout_proof`,
 * proves the address is yours. undefined for any other failure.
 */
export function payoutProofMessageOf(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.status !== 409) return undefined;
  const message = (error.body as { payout_proof_message?: unknown } | undefined)?.payout_proof_message;
  return typeof message === 'string' ? message : undefined;
}

/** One line: the message itself, or the 422 items as `loc.path: msg`. */
export function describeDetail(detail: string | ValidationItem[]): string {
  return typeof detail === 'string' ? detail : detail.map(describeItem).join('; ');
}

export function describeItem(item: ValidationItem): string {
  return `${item.loc.join('.')}: ${item.msg}`;
}
