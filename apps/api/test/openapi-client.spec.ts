import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from './test-app';

/*
 * The document as a client sees it: fetched from the running API, linted by Redocly under its
 * recommended rules, turned into types by openapi-typescript, and used by a client (openapi-fetch)
 * that tsc type-checks and node runs against the same API.
 */

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');
const bin = (path: string) => join(ROOT, 'node_modules', path);
const node = (script: string, args: string[], cwd: string) =>
  run(process.execPath, [script, ...args], {
    cwd,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 << 20,
  });

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

describe('the OpenAPI document, as a generated client uses it', () => {
  let app: TestApp;
  let dir: string;
  let document: any;

  beforeAll(async () => {
    app = await startTestApp();
    dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
    const response = await fetch(`${app.baseUrl}/v1/openapi.json`);
    expect(response.status).toBe(200);
    document = await response.json();
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes Redocly lint under its recommended rules with no error and no warning', async () => {
    const lint = await node(
      bin('@redocly/cli/bin/cli.js'),
      ['lint', 'openapi.json', '--format=json', '--extends=recommended', '--max-problems=1000'],
      dir,
    ).catch(
      (failed: { stdout: string }) => failed, // exits 1 when it finds errors: the report is still on stdout
    );
    const report = JSON.parse(lint.stdout) as LintReport;
    expect(
      report.problems.map(({ ruleId, message, location }) => `${ruleId} ${location[0]?.pointer}: ${message}`),
    ).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('names the server it was fetched from and documents every answer of every operation', () => {
    expect(document.servers).toEqual([{ url: app.baseUrl }]);
    expect(document.components.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: expect.any(String),
    });
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const answers = operation.responses as Record<string, any>;
        expect([where, Array.isArray(operation.security)]).toEqual([where, true]);
        if (operation.security.length > 0)
          expect([where, answers['401']?.content['application/json'].schema]).toEqual([
            where,
            { $ref: '#/components/schemas/Error' },
          ]);
        expect([where, answers['422']?.content['application/json'].schema]).toEqual([
          where,
          { $ref: '#/components/schemas/ValidationError' },
        ]);
        for (const [status, answer] of Object.entries(answers)) {
          if (Number(status) >= 400)
            expect([where, status, answer.content?.['application/json']?.schema]).toEqual([
              where,
              status,
              expect.anything(),
            ]);
        }
        if (path !== '/v1/health')
          expect([where, answers['429']?.headers?.['Retry-After']?.schema]).toEqual([
            where,
            { type: 'integer', minimum: 0 },
          ]);
        for (const parameter of operation.parameters ?? []) {
          if (parameter.name === 'site_id')
            expect([where, parameter.schema]).toEqual([where, { type: 'string', format: 'uuid' }]);
        }
      }
    }
    expect(Object.keys(document.paths['/v1/health'].get.responses)).not.toContain('429');
    // The wallet routes name both their limits: per address and client, and per client across addresses.
    for (const path of ['/v1/agents/me', '/v1/agents/me/payments']) {
      const operation = document.paths[path].get;
      expect(operation['x-rate-limit']).toEqual({ limit: 100, window_seconds: 60, per: 'wallet', per_client: 1000 });
      expect(operation.responses['429'].description).toMatch(/wallet address and client IP.*1000 per client IP/);
    }
    expect(document.paths['/v1/publishers/register'].post.security).toEqual([]);
    expect(document.paths['/v1/gates'].post.responses['402'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/GateOfferView',
    });
  });

  it('describes prices and counters as the API reads and writes them', () => {
    const schemas = document.components.schemas;
    const priceText = new RegExp(schemas.PricingDto.properties.default_price_usd.oneOf[1].pattern);
    for (const text of ['', '+', '-', '.', '+.', '1.2.3']) expect([text, priceText.test(text)]).toEqual([text, false]);
    for (const text of ['0', '0.005', '+1', '.5', '5.', '007'])
      expect([text, priceText.test(text)]).toEqual([text, true]);
    expect(schemas.PricingAppliedView.properties.rules_applied.type).toBe('integer');
    expect(schemas.SiteView.properties.rules_count.type).toBe('integer');
    expect(schemas.PricingView.properties.version.type).toBe('integer');
    expect(schemas.UpdatePublisherDto.properties.payout_address.type).toEqual(['string', 'null']);
  });

  it('generates types from which a client type-checks and registers, sets a payout address, creates a site and prices it', async () => {
    await node(bin('openapi-typescript/bin/cli.js'), ['openapi.json', '--output', 'api.ts'], dir);
    copyFileSync(join(__dirname, 'openapi-client/client.mts'), join(dir, 'client.mts'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
          outDir: 'out',
        },
        files: ['client.mts'],
      }),
    );
    // Type errors (and an @ts-expect-error that is not an error) fail here, with tsc's output.
    await node(bin('typescript/bin/tsc'), ['-p', 'tsconfig.json'], dir).catch((failed: { stdout: string }) => {
      throw new Error(`tsc found errors in the generated client:\n${failed.stdout}`);
    });

    const email = `generated-${Date.now()}@example.com`;
    const { stdout } = await node(join(dir, 'out/client.mjs'), [app.baseUrl, email], dir);
    const answers = JSON.parse(stdout);

    expect(answers.registered).toEqual({
      status: 201,
      api_key: expect.stringMatching(/^xk_pub_/),
      payout_address: null,
    });
    expect(answers.again).toEqual({ status: 409, detail: expect.stringMatching(/already registered/) });
    expect(answers.payout).toEqual({ status: 200, payout_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' });
    expect(answers.site).toEqual({
      status: 201,
      site_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      domain: expect.stringMatching(/\.example\.com$/),
      rules_count: 0,
    });
    expect(answers.priced).toEqual({ status: 200, rules_applied: 2 });
    expect(answers.refused).toEqual({ status: 422, type: 'price_format' });
    expect(answers.pricing).toEqual({
      status: 200,
      default_price_usd: '0.005',
      rules: [
        { path: '/free/*', price_usd: '0' },
        { path: '/premium/*', price_usd: '0.25' },
      ],
      version: expect.any(Number),
    });
    expect(answers.me).toEqual({ status: 200, payout_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' });
  }, 120_000);
});
