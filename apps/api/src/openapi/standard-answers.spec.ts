import type { OpenAPIObject } from '@nestjs/swagger';
import { documentStandardAnswers, RATE_LIMIT_EXTENSION } from './standard-answers';

const options = {
  defaultRateLimit: { limit: 100, window_seconds: 60, per: 'credential' as const },
  unauthorized: { bearer: 'Missing or invalid API key' },
};
const ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const VALIDATION_ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } };

function documentOf(paths: OpenAPIObject['paths']): OpenAPIObject {
  return documentStandardAnswers({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths }, options);
}

describe('documentStandardAnswers', () => {
  it('marks a route without a guard public, and gives a guarded one its 401', () => {
    const document = documentOf({
      '/open': { get: { responses: { 200: { description: 'ok' } } } },
      '/mine': { get: { security: [{ bearer: [] }], responses: { 200: { description: 'ok' } } } },
    });
    expect(document.paths['/open'].get!.security).toEqual([]);
    expect(document.paths['/open'].get!.responses[401]).toBeUndefined();
    expect(document.paths['/mine'].get!.responses[401]).toEqual({
      description: 'Missing or invalid API key',
      content: ERROR,
    });
  });

  it('documents body errors only where a body is parsed, and 414 only where the path has a parameter', () => {
    const document = documentOf({
      '/things': { get: { responses: {} }, post: { responses: {} } },
      '/things/{id}': { delete: { responses: {} } },
    });
    expect(Object.keys(document.paths['/things'].get!.responses).sort()).toEqual(['400', '422', '429', '500', '503']);
    expect(Object.keys(document.paths['/things'].post!.responses).sort()).toEqual([
      '400',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(document.paths['/things/{id}'].delete!.responses).sort()).toEqual([
      '400',
      '413',
      '414',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(document.paths['/things'].get!.responses[422]).toMatchObject({ content: VALIDATION_ERROR });
    expect(document.components!.schemas).toHaveProperty('ValidationItem');
  });

  it('states each route’s rate limit with a Retry-After, and none on a route without one', () => {
    const document = documentOf({
      '/default': { get: { responses: {} } },
      '/login': {
        post: { [RATE_LIMIT_EXTENSION]: { limit: 5, window_seconds: 60, per: 'ip' }, responses: {} } as never,
      },
      '/health': { get: { [RATE_LIMIT_EXTENSION]: false, responses: {} } as never },
    });
    const defaulted = document.paths['/default'].get as unknown as Record<string, any>;
    expect(defaulted[RATE_LIMIT_EXTENSION]).toEqual(options.defaultRateLimit);
    expect(defaulted.responses[429].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 0 });
    expect(document.paths['/login'].post!.responses[429]).toMatchObject({
      description: expect.stringMatching(/more than 5 requests in 60 s per IP/),
    });
    expect(document.paths['/health'].get!.responses[429]).toBeUndefined();
    expect(document.paths['/health'].get).not.toHaveProperty(RATE_LIMIT_EXTENSION);
  });

  it('keeps what a route documents itself, and gives its bodiless errors the `{detail}` body', () => {
    const gate = { $ref: '#/components/schemas/Gate' };
    const document = documentOf({
      '/gates': {
        post: {
          responses: {
            402: { description: 'a gate', content: { 'application/json': { schema: gate } } },
            409: { description: 'no payout address' },
            422: { description: 'bad url' },
            204: { description: 'nothing' },
          },
        },
      },
    });
    const answers = document.paths['/gates'].post!.responses;
    expect(answers[402]).toEqual({ description: 'a gate', content: { 'application/json': { schema: gate } } });
    expect(answers[409]).toEqual({ description: 'no payout address', content: ERROR });
    expect(answers[422]).toEqual({ description: 'bad url', content: VALIDATION_ERROR });
    expect(answers[204]).toEqual({ description: 'nothing' });
  });
});
