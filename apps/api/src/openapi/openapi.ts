import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { SECURITY_SCHEMES, UNAUTHORIZED } from '../auth/authenticated';
import type { AppConfig } from '../config/config';
import { DOCS_PAGE_HEADERS } from '../http/page-security-headers';
import { requestBaseUrl } from '../http/request-base-url';
import { DEFAULT_LIMIT_DOC } from '../rate-limit/limits';
import { documentStandardAnswers } from './standard-answers';

export const API_VERSION = '0.1.0';

/** OpenAPI 3.1 built from the controllers and DTOs, served at /v1/openapi.json with a docs page at /docs. */
export function setupOpenApi(app: NestFastifyApplication, config: AppConfig): void {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Crawlgate API')
    .setDescription(
      'Pay-per-crawl payment gate: publishers price bot access to their paths, middleware answers unpaid bots with 402, ' +
        'agents pay in USDC and receive signed access tokens. Errors are `{detail}`; validation errors are 422 `{detail: [{loc, msg, type, input?, ctx?}]}`.',
    )
    .setVersion(API_VERSION)
    .setLicense('MIT', 'https://opensource.org/licenses/MIT');
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) builder.addSecurity(name, scheme);
  const document = documentStandardAnswers(SwaggerModule.createDocument(app, builder.build()), {
    defaultRateLimit: DEFAULT_LIMIT_DOC,
    unauthorized: UNAUTHORIZED,
  });
  // The docs page shares the dashboard's origin: under a CSP too (see page-security-headers.ts).
  // Judged by the route Fastify matched, not the raw URL: it routes /%64ocs as /docs.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route !== undefined && isDocsPath(route)) void reply.headers(DOCS_PAGE_HEADERS);
      done();
    });
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'v1/openapi.json',
    yamlDocumentUrl: 'v1/openapi.yaml',
    useGlobalPrefix: false,
    customSiteTitle: 'Crawlgate API docs',
    // PUBLIC_BASE_URL, or (on `local`) the address the document was asked for: paths already start with /v1.
    patchDocumentOnRequest: <Request>(request: Request, _reply: unknown, built: OpenAPIObject) => ({
      ...built,
      servers: [{ url: requestBaseUrl(config, request as FastifyRequest) }],
    }),
  });
}

/** /docs and what Swagger UI loads under it (its script, styles and icons), as routes. */
function isDocsPath(url: string): boolean {
  return url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?');
}
