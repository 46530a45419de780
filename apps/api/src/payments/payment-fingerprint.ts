import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * What a payment-identifier is compared by: SHA-256 of the gate ref and the payment as canonical
 * JSON (keys sorted at every depth), so the same payment re-sent with its keys in another order is
 * still the same, and the same payment for another gate is not.
 */
export function paymentFingerprint(gateRef: string, payment: unknown): string {
  return createHash('sha256')
    .update(`${gateRef}\n${canonicalJson(payment)}`)
    .digest('hex');
}

/** Constant-time: how much of a stored fingerprint matches is no one's business. */
export function sameFingerprint(stored: string | null, presented: string): boolean {
  if (stored === null || stored.length !== presented.length) return false;
  return timingSafeEqual(Buffer.from(stored), Buffer.from(presented));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
