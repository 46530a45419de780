import type { OpenAPIObject, OperationObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';

/*
 * Answers every route can give because of what runs before and after its handler (the Fastify
 * parser, the preValidation hook, the guards, the rate limiter, the exception filter), written
 * into the document here once, so no route can forget one. A route documents only its own
 * answers (its success, its 404 or 409), and an error it names without a body gets `{detail}`.
 */

export const ERROR_SCHEMA = 'Error';
export const VALIDATION_ERROR_SCHEMA = 'ValidationError';
const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

/** The exception filter's bodies: `{detail: message}`, and `{detail: [item, …]}` for a 422. */
export const ERROR_SCHEMAS: Record<string, SchemaObject> = {
  [ERROR_SCHEMA]: {
    type: 'object',
    required: ['detail'],
    properties: { detail: { type: 'string', description: 'A human-readable message.', example: 'Site not found' } },
  },
  ValidationItem: {
    type: 'object',
    required: ['loc', 'msg', 'type'],
    properties: {
      loc: {
        type: 'array',
        items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        description: 'Where the problem is.',
        example: ['body', 'rules', 0, 'price_usd'],
      },
      msg: { type: 'string', example: 'Price must be between 0 and 1 USD' },
      type: { type: 'string', description: 'A stable machine-readable kind.', example: 'price_range' },
      input: { description: 'The value that failed, when there was one: any JSON value.' },
      ctx: {
        type: 'object',
        additionalProperties: true,
        description: 'The limits the value broke.',
        example: { min: '0', max: '1' },
      },
    },
  },
  [VALIDATION_ERROR_SCHEMA]: {
    type: 'object',
    required: ['detail'],
    properties: {
      detail: { type: 'array', items: ref('ValidationItem'), description: 'Every problem found, at once.' },
    },
  },
};

/** The rate limit a route documents (rate-limit/limits.ts); `false` for a route that has none. */
export const RATE_LIMIT_EXTENSION = 'x-rate-limit';
export interface RateLimitDoc {
  limit: number;
  window_seconds: number;
  /** What the requests are counted by. */
  per: 'ip' | 'credential' | 'gate' | 'visitor' | 'wallet';
  /** A second limit in the same window per client IP, across every credential it names. */
  per_client?: number;
}

export interface StandardAnswersOptions {
  /** The limit of routes that name none. */
  defaultRateLimit: RateLimitDoc;
  /** Per security scheme name: what its guard answers 401 for. */
  unauthorized: Record<string, string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Fastify parses a body on these: so it can be too large (413), not JSON (415) or malformed (400). */
const BODY_METHODS = new Set(['put', 'post', 'delete', 'patch']);

const PER: Record<RateLimitDoc['per'], string> = {
  ip: 'per IP address',
  credential: 'per credential (per IP address without one)',
  gate: 'per gate',
  visitor:
    'per wallet the proof names and visitor the middleware names (client_ip), per credential (per IP address without a valid one)',
  wallet: 'per wallet address and client IP (an address proves nothing)',
};

/** Adds the answers every route can give to each operation of `document`, in place. */
export function documentStandardAnswers(document: OpenAPIObject, options: StandardAnswersOptions): OpenAPIObject {
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...ERROR_SCHEMAS } };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) documentOperation(operation, { path, method, options });
    }
  }
  return document;
}

function documentOperation(
  operation: OperationObject,
  { path, method, options }: { path: string; method: string; options: StandardAnswersOptions },
): void {
  const responses = operation.responses;
  const add = (status: number, answer: ResponseObject) => {
    responses[status] ??= answer;
  };

  // A route without a guard is public: say so, rather than leave it to a document-wide default.
  if (!operation.security?.length) operation.security = [];
  else {
    // A requirement of several schemes (an address and its proof) can fail on any of them.
    const schemes = Object.keys(operation.security[0]);
    add(401, {
      description: schemes.map((scheme) => options.unauthorized[scheme] ?? 'Missing or invalid credentials').join('; '),
    });
  }

  add(400, {
    description: BODY_METHODS.has(method)
      ? 'Malformed request: the body is not valid JSON, not UTF-8, or nested too deeply, or the URL has a percent-escape that does not decode'
      : 'Malformed request: the URL has a percent-escape that does not decode',
  });
  if (BODY_METHODS.has(method)) {
    add(413, { description: 'Request body is too large' });
    add(415, { description: 'Content-Type must be application/json' });
  }
  if (path.includes('{')) add(414, { description: 'A path parameter of the request URL is too long' });
  add(422, {
    description:
      'Validation error: a field, query or path parameter is invalid (control characters are refused everywhere)',
    content: { 'application/json': { schema: ref(VALIDATION_ERROR_SCHEMA) } },
  });

  const extensions = operation as unknown as Record<string, unknown>;
  const limit = extensions[RATE_LIMIT_EXTENSION] as RateLimitDoc | false | undefined;
  if (limit === false) delete extensions[RATE_LIMIT_EXTENSION];
  else {
    const documented = limit ?? options.defaultRateLimit;
    extensions[RATE_LIMIT_EXTENSION] = documented;
    add(429, {
      description:
        `Rate limited: more than ${documented.limit} requests in ${documented.window_seconds} s ${PER[documented.per]}` +
        (documented.per_client ? `, or more than ${documented.per_client} per client IP across them` : ''),
      headers: {
        'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
      },
    });
  }

  add(500, { description: 'Internal server error (nothing about it is disclosed)' });
  add(503, {
    description: 'The database is unavailable; try again shortly',
    headers: {
      'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
    },
  });

  // Every error a route names without a body is the exception filter's: `{detail}`, or a 422's list.
  for (const [status, answer] of Object.entries(responses)) {
    if (Number(status) >= 400 && answer && !('$ref' in answer) && !answer.content) {
      answer.content = {
        'application/json': { schema: ref(status === '422' ? VALIDATION_ERROR_SCHEMA : ERROR_SCHEMA) },
      };
    }
  }
}
