// Browser code runs in page.evaluate: the DOM's types are needed here.
/// <reference lib="dom" />
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../../api/test/test-app';
import { CHROMIUM_ARGS, chromiumPath } from '../../../tools/testing/chromium';

/*
 * The API's docs page (Swagger UI) shares its origin with the dashboard, whose tab holds the
 * publisher's key: it runs under a CSP of its own (no script from elsewhere, no inline script,
 * no framing), and still renders, in Debian's Chromium.
 */
describe('the API docs page in a browser', () => {
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    app = await startTestApp();
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  }, 60_000);

  it('is served with a CSP that forbids inline and foreign script and framing', async () => {
    for (const path of ['/docs', '/docs/swagger-ui-init.js']) {
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval|\*)/);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      await response.text();
    }
  });

  it('renders the API under that CSP, with no violation or error in the console', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${app.baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title', { hasText: 'Crawlgate API' }).waitFor({ timeout: 30_000 });
    await page.locator('.opblock-summary-path', { hasText: '/v1/gates' }).first().waitFor({ timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  });
});
