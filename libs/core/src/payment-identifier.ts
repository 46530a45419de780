/*
 * x402's `payment-identifier` extension (specs/extensions/payment-identifier): a client-chosen
 * idempotency id inside a v2 payment's `extensions`. The server declares it in PAYMENT-REQUIRED;
 * the same id with the same payment gets the stored answer, with another payment 409.
 * Written here rather than imported from @x402/extensions, which is a test-only dependency;
 * payment-identifier.spec.ts holds it to that package's declaration and id rules.
 */

export const PAYMENT_IDENTIFIER = 'payment-identifier';
export const PAYMENT_ID_MIN_LENGTH = 16;
export const PAYMENT_ID_MAX_LENGTH = 128;
const PAYMENT_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

/** What PAYMENT-REQUIRED's `extensions['payment-identifier']` holds: optional, with the id's schema. */
export function paymentIdentifierDeclaration() {
  return {
    info: { required: false },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        required: { type: 'boolean' },
        id: {
          type: 'string',
          minLength: PAYMENT_ID_MIN_LENGTH,
          maxLength: PAYMENT_ID_MAX_LENGTH,
          pattern: PAYMENT_ID_PATTERN.source,
        },
      },
      required: ['required'],
    },
  };
}

export type PaymentIdentifierRead = { ok: true; id: string | null } | { ok: false; msg: string };

/**
 * The id a decoded payment carries in `extensions['payment-identifier'].info.id`, null when it
 * carries none. A malformed one is refused rather than ignored: the client meant to be idempotent.
 */
export function readPaymentIdentifier(payment: unknown): PaymentIdentifierRead {
  const extensions = (payment as { extensions?: unknown } | null)?.extensions;
  if (extensions === undefined) return { ok: true, id: null };
  if (!isObject(extensions)) return { ok: false, msg: 'extensions must be an object' };
  const extension = extensions[PAYMENT_IDENTIFIER];
  if (extension === undefined) return { ok: true, id: null };
  if (!isObject(extension) || !isObject(extension.info))
    return { ok: false, msg: `extensions.${PAYMENT_IDENTIFIER}.info must be an object` };
  const id = extension.info.id;
  if (id === undefined) return { ok: true, id: null };
  if (
    typeof id !== 'string' ||
    id.length < PAYMENT_ID_MIN_LENGTH ||
    id.length > PAYMENT_ID_MAX_LENGTH ||
    !PAYMENT_ID_PATTERN.test(id)
  ) {
    return {
      ok: false,
      msg: `extensions.${PAYMENT_IDENTIFIER}.info.id must be ${PAYMENT_ID_MIN_LENGTH}–${PAYMENT_ID_MAX_LENGTH} letters, digits, "-" or "_"`,
    };
  }
  return { ok: true, id };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
