/**
 * Every error the API answers: `detail` says what went wrong (a sentence; for a 422, the list of
 * problems). Some answers add fields (a 402's `reason`: PaymentRejection).
 */
export interface ApiErrorBody {
  detail: string | ValidationItem[];
}

/**
 * One entry of a 422 body, `{detail: ValidationItem[]}`: the API writes them and the SDKs read
 * them, so the shape lives here once.
 */
export interface ValidationItem {
  /** Where the problem is, e.g. ["body", "rules", 0, "price_usd"] or ["query", "limit"]. */
  loc: (string | number)[];
  msg: string;
  /** A stable machine-readable kind, e.g. "missing", "price_range", "pattern_globstar". */
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}
