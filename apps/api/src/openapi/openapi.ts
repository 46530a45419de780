import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

export const API_VERSION = '0.1.0';

/** OpenAPI 3.1 built from the controllers and DTOs, served at /v1/openapi.json with a docs page at /docs. */
export function setupOpenApi(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Crawlgate API')
    .setDescription(
      'Pay-per-crawl payment gate: publishers price bot access to their paths, middleware answers unpaid bots with 402, ' +
        'agents pay in USDC and receive signed access tokens. Errors are `{detail}`; validation errors are 422 `{detail: [{loc, msg, type, input?, ctx?}]}`.',
    )
    .setVersion(API_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Publisher API key: xk_pub_…' })
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Site-Token', description: 'Site token: st_…' }, 'site-token')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Wallet-Address', description: 'Agent wallet: 0x + 40 hex' }, 'wallet')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'v1/openapi.json',
    yamlDocumentUrl: 'v1/openapi.yaml',
    useGlobalPrefix: false,
    customSiteTitle: 'Crawlgate API docs',
  });
}
