import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('the dashboard at /dashboard/', () => {
  describe('when built', () => {
    let dir: string;
    let app: TestApp;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
      mkdirSync(join(dir, 'assets'));
      writeFileSync(
        join(dir, 'index.html'),
        '<!doctype html><title>Crawlgate dashboard</title><script type="module" src="/dashboard/assets/app-1234.js"></script>',
      );
      writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log("dashboard")');
      // A file a deploy may leave beside the build (Vite writes none): never served.
      writeFileSync(join(dir, '.env'), 'SECRET=1');
      mkdirSync(join(dir, '.git'));
      writeFileSync(join(dir, '.git', 'config'), '[core]');
      app = await startTestApp({ config: { dashboardDir: dir } });
    });
    afterAll(async () => {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('serves index.html, never cached, under a policy that allows only this origin', async () => {
      const response = await fetch(`${app.baseUrl}/dashboard/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toContain('Crawlgate dashboard');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      // A page that opened the dashboard keeps no handle on its tab (to send it to a look-alike sign-in).
      expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    });

    it('caches hashed assets for a year', async () => {
      const response = await fetch(`${app.baseUrl}/dashboard/assets/app-1234.js`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/javascript/);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it('redirects /dashboard to /dashboard/, and answers unknown files and escapes with 404', async () => {
      const redirect = await fetch(`${app.baseUrl}/dashboard`, { redirect: 'manual' });
      expect(redirect.status).toBe(301);
      expect(redirect.headers.get('location')).toBe('/dashboard/');
      expect((await fetch(`${app.baseUrl}/dashboard/assets/missing.js`)).status).toBe(404);
      const escape = await fetch(`${app.baseUrl}/dashboard/..%2f..%2fpackage.json`);
      expect(escape.status).not.toBe(200);
    });

    it('serves no dotfile, nor anything in a dot directory', async () => {
      for (const path of ['/dashboard/.env', '/dashboard/.git/config', '/dashboard/%2eenv'])
        expect([path, (await fetch(`${app.baseUrl}${path}`)).status]).toEqual([path, 404]);
    });

    it('leaves the API where it was', async () => {
      expect((await app.call('GET', '/v1/health')).status).toBe(200);
    });
  });

  it('says how to build it when it is not built', async () => {
    const app = await startTestApp({ config: { dashboardDir: join(tmpdir(), 'no-dashboard-here') } });
    try {
      for (const path of ['/dashboard/', '/dashboard/assets/app.js']) {
        const { status, body } = await app.call('GET', path);
        expect(status).toBe(404);
        expect((body as { detail: string }).detail).toMatch(/npm run build:dashboard/);
      }
    } finally {
      await app.close();
    }
  });
});
