// Browser code runs in page.evaluate and locator callbacks: the DOM's types are needed here.
/// <reference lib="dom" />
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { encodeBase64Json, payoutProofMessage, signAccessToken, type CrawlerView } from '@crawlgate/core';
import { createCrawlgate } from '../../../libs/middleware/src/crawlgate';
import type { Decision } from '../../../libs/middleware/src/decision';
import { AHREFSBOT, BROWSER, freePort, GPTBOT } from '../../e2e/middleware/support/gated-site';
import { crawlerRanges } from '../../e2e/middleware/support/crawler-ranges';
import { startAgentDirectory } from '../../../libs/middleware/testing/agent-directory';
import { crawlgateExpress } from '../../../libs/middleware/src/adapters/express';
import { createAgent, type PaymentEvent } from '@crawlgate/agent';
import express from 'express';
import { fundUsdc, newWallet, signPayment } from '../../api/test/test-agent';
import { ClaimerService } from '../../api/src/batch-settlement/claimer.service';
import { GateCounterService } from '../../api/src/gates/gate-counter.service';
import { startTestApp, type TestApp } from '../../api/test/test-app';
import { registerPublisher } from '../../api/test/fixtures';
import { batchOffer, testChannel } from '../../api/test/test-channel';
import { CHROMIUM_ARGS, chromiumPath } from '../../../tools/testing/chromium';

/*
 * A publisher's whole day in the dashboard, in Debian's Chromium: the built page (Vite), served
 * by a real API on PGlite, with a real payment on the local chain in the middle.
 */
/** Screenshots of every page, for people to look at (git-ignored). */
const SCREENSHOTS = join(__dirname, '../../../test-output/dashboard');

describe('the publisher dashboard in a browser', () => {
  const repo = join(__dirname, '../../..');
  let outDir: string;
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  let password = 'correct horse battery';
  const email = `dash-${Date.now()}@example.com`;
  const payout = newWallet().address;
  const domain = `dash-${Date.now()}.example.com`;
  let siteToken = '';

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'dashboard-build-'));
    mkdirSync(SCREENSHOTS, { recursive: true });
    execFileSync(process.execPath, ['tools/build-dashboard.mjs'], {
      cwd: repo,
      env: { ...process.env, CRAWLGATE_DASHBOARD_OUT: outDir },
      stdio: 'pipe',
    });
    app = await startTestApp({ config: { dashboardDir: outDir }, isolateChain: true });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
    page = await browser.newPage();
    // A CSP violation or an uncaught error shows up here, so the page's own failures fail the test.
    page.on(
      'console',
      (message) =>
        message.type() === 'error' && !/status of 4\d\d/.test(message.text()) && problems.push(message.text()),
    );
    page.on('pageerror', (error) => problems.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    rmSync(outDir, { recursive: true, force: true });
  }, 60_000);

  const url = (fragment = '') => `${app.baseUrl}/dashboard/${fragment}`;
  const apiKeyInTab = () => page.evaluate(() => sessionStorage.getItem('crawlgate.api_key'));

  it('creates an account, shows the key once and keeps it only in the tab', async () => {
    await page.goto(url());
    await page.getByRole('tab', { name: 'Create account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).last().click();
    // The API's 422 for the password appears next to the password field.
    await expectText(page.locator('[data-field="password"]'), /8/);

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).last().click();
    const shownKey = await page.locator('[data-secret="API key"]').textContent();
    expect(shownKey).toMatch(/^xk_pub_/);
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await expectText(page.locator('main'), /No sites yet/);
    expect(await apiKeyInTab()).toBe(shownKey);
    expect(page.url()).not.toContain(shownKey!);
  });

  it('sets the payout address only with the right password', async () => {
    await page.goto(url('#/settings'));
    await page.getByLabel('Wallet address').fill(payout);
    await page.getByLabel('Your password, to confirm').fill('not my password');
    await page.getByRole('button', { name: 'Save payout address' }).click();
    await expectText(page.getByRole('alert'), /password/i);
    expect(
      (await app.call('GET', '/v1/publishers/me', { headers: await authHeader() })).body.payout_address,
    ).toBeNull();

    await page.getByLabel('Your password, to confirm').fill(password);
    await page.getByRole('button', { name: 'Save payout address' }).click();
    await expectText(page.getByRole('status'), new RegExp(payout, 'i'));
    expect((await app.call('GET', '/v1/publishers/me', { headers: await authHeader() })).body.payout_address).toBe(
      payout,
    );
  });

  it('takes an address another publisher names only with its signature of the text it shows', async () => {
    // A publisher of its own, signed in in a tab of its own: each submit is a password check, and
    // the day's account has a budget of 5 in 15 minutes for its other tests.
    const wallet = newWallet();
    const squatter = await registerPublisher(app);
    const named = await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: wallet.address },
      headers: { ...squatter.auth, 'x-confirm-password': squatter.password },
    });
    expect(named.status).toBe(200);
    const owner = await registerPublisher(app);
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      tab.on('pageerror', (error) => problems.push(error.message));
      await tab.addInitScript((key) => sessionStorage.setItem('crawlgate.api_key', key), owner.apiKey);
      // A browser wallet (EIP-1193, as an extension injects it) holding the address's key.
      const asked: string[] = [];
      await tab.exposeFunction('testWalletRequest', async (method: string, params: unknown[]) => {
        asked.push(method);
        if (method === 'eth_requestAccounts') return [wallet.address];
        if (method !== 'personal_sign' || String(params[1]).toLowerCase() !== wallet.address.toLowerCase())
          throw new Error(`the test wallet does not do ${method} for ${String(params[1])}`);
        return wallet.signMessage({ message: { raw: params[0] as `0x${string}` } });
      });
      await tab.addInitScript(() => {
        const page = window as unknown as {
          ethereum: unknown;
          testWalletRequest(method: string, params: unknown[]): Promise<unknown>;
        };
        page.ethereum = {
          request: ({ method, params }: { method: string; params?: unknown[] }) =>
            page.testWalletRequest(method, params ?? []),
        };
      });
      const save = async (proof?: string) => {
        if (proof !== undefined) await tab.getByLabel('Signature').fill(proof);
        await tab.getByLabel('Your password, to confirm').fill(owner.password);
        await tab.getByRole('button', { name: 'Save payout address' }).click();
      };
      await tab.goto(url('#/settings'));
      await tab.getByLabel('Wallet address').fill(wallet.address);
      await save();
      const message = payoutProofMessage(wallet.address, owner.publisherId);
      const proofGroup = tab.getByRole('group', { name: 'Proof that the address is yours' });
      await expectText(proofGroup.locator('.proof-message'), new RegExp(`^${message}$`));

      await save(await newWallet().signMessage({ message }));
      await expectText(tab.getByRole('alert'), /payout_proof is not a signature by/);
      const ownerNow = async () => (await app.call('GET', '/v1/publishers/me', { headers: owner.auth })).body;
      expect((await ownerNow()).payout_address).toBeNull();

      await tab.getByRole('button', { name: 'Sign with your browser wallet' }).click();
      await tab.waitForFunction(
        () => document.querySelector<HTMLInputElement>('input[name="payout_proof"]')?.value.startsWith('0x'),
        undefined,
        { timeout: 10_000 },
      );
      expect(await tab.getByLabel('Signature').inputValue()).toBe(await wallet.signMessage({ message }));
      expect(asked).toEqual(['eth_requestAccounts', 'personal_sign']);
      await save();
      await expectText(tab.getByRole('status'), new RegExp(wallet.address, 'i'));
      expect(await ownerNow()).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
      await expectText(
        tab.locator('form[aria-label="Payout address"]'),
        /Proven: this address signed for your account/,
      );
      // The proof took the address from the publisher that named it without one.
      expect((await app.call('GET', '/v1/publishers/me', { headers: squatter.auth })).body.payout_address).toBeNull();
      await tab.screenshot({ path: join(SCREENSHOTS, 'settings-payout-proof.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('adds a site, with the server’s 422 next to the field and the credentials shown once', async () => {
    await page.goto(url('#/sites'));
    await page.getByLabel('Domain').fill('https://bad/domain');
    await page.getByRole('button', { name: 'Add site' }).click();
    await expectText(page.locator('form[aria-label="Add a site"] .field-error'), /host name/);

    await page.getByLabel('Domain').fill(domain);
    await page.getByLabel('Name (optional)').fill('Dashboard News');
    await page.getByRole('button', { name: 'Add site' }).click();
    siteToken = (await page.locator('[data-secret="Site token"]').textContent())!;
    expect(siteToken).toMatch(/^st_/);
    expect(await page.locator('[data-secret="Access-token secret"]').textContent()).toMatch(/^cgsec_/);
    await expectText(page.locator('.once-only'), /Shown once/);
    await page.getByRole('button', { name: 'I have stored them' }).click();
    expect(await page.locator('.once-only').count()).toBe(0);
    await expectText(page.locator(`tr[data-site="${domain}"]`), /Dashboard News/);
  });

  it('edits pricing: server errors by field, reordering, a path tester, then saves', async () => {
    await page.locator(`tr[data-site="${domain}"]`).getByRole('link', { name: 'Pricing' }).click();
    await page.getByLabel('Default price (USD per request)').fill('0.001');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.locator('input[name="rules.0.path"]').fill('/blog/**');
    await page.locator('input[name="rules.0.price_usd"]').fill('0.05');
    await page.locator('input[name="rules.1.path"]').fill('/blog/free-*');
    await page.locator('input[name="rules.1.price_usd"]').fill('2');
    await page.getByRole('button', { name: 'Save pricing' }).click();
    await expectText(page.locator('[data-field="rules.0.path"]'), /\*\*/);
    await expectText(page.locator('[data-field="rules.1.price_usd"]'), /1/);
    expect(
      (await app.call('GET', `/v1/sites/${await siteId()}/pricing`, { headers: await authHeader() })).body.rules,
    ).toEqual([]);

    await page.locator('input[name="rules.0.path"]').fill('/blog/*');
    await page.locator('input[name="rules.1.price_usd"]').fill('0');
    await page.getByLabel('Path or URL').fill('/blog/free-post?ref=feed');
    await expectText(page.getByTestId('path-result'), /\$0\.05 by rule 1/);
    await page.getByRole('button', { name: 'Move rule 2 up' }).click();
    await expectText(page.getByTestId('path-result'), /\$0 by rule 1 \(\/blog\/free-\*\)/);
    await page.getByLabel('Path or URL').fill('/about');
    await expectText(page.getByTestId('path-result'), /\$0\.001 by the default price/);

    await page.getByRole('button', { name: 'Save pricing' }).click();
    await expectText(page.getByRole('status').first(), /2 rules are live/);
    const saved = await app.call('GET', `/v1/sites/${await siteId()}/pricing`, { headers: await authHeader() });
    expect(saved.body).toMatchObject({
      default_price_usd: '0.001',
      rules: [
        { path: '/blog/free-*', price_usd: '0' },
        { path: '/blog/*', price_usd: '0.05' },
      ],
    });
  });

  it('shows a real payment on the overview and in the payments table', async () => {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    // A right-to-left override in the path (any crawler can pay for such a path): shown escaped on
    // every page, never reordering the cell into "/blog/post-1exe.pdf".
    const gate = await app.call('POST', '/v1/gates', {
      body: { url: '/blog/post-1\u202Efdp.exe' },
      headers: { 'x-site-token': siteToken },
    });
    expect(gate.status).toBe(402);
    await app.call('POST', '/v1/gates', { body: { url: '/blog/post-2' }, headers: { 'x-site-token': siteToken } });
    const paid = await app.call('POST', `/v1/gates/${gate.body.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate.body) },
    });
    expect(paid.status).toBe(200);
    // Gates offered are counted in memory and written in batches: write them now.
    await app.app.get(GateCounterService).flush();

    await page.goto(url('#/overview'));
    await expectText(page.getByTestId('revenue'), /\$0\.05/);
    await expectText(page.getByTestId('paid-crawls'), /1/);
    await expectText(page.getByTestId('conversion'), /50\.0%/);
    await expectText(page.getByTestId('agents'), /agents1$/);
    const topPaths = page.getByRole('table', { name: 'Top paths' });
    await expectText(topPaths, /\/blog\/post-1\\u202efdp\.exe/);
    expect(await topPaths.textContent()).not.toMatch(/\u202e/);
    await expectText(page.getByRole('table', { name: 'Top agents' }), new RegExp(agent.address, 'i'));
    expect(await page.getByTestId('revenue-chart').locator('canvas').count()).toBeGreaterThan(0);

    await page.goto(url('#/payments'));
    const row = page.getByRole('table', { name: 'Payments' }).locator('tbody tr').first();
    await expectText(row, /\/blog\/post-1\\u202efdp\.exe/);
    expect(await row.textContent()).not.toMatch(/\u202e/);
    await expectText(row, /\$0\.05/);
    await expectText(row, new RegExp(agent.address, 'i'));
    await expectText(row, new RegExp(`${paid.body.tx_hash.slice(0, 10)}.*local`));
    // The local chain has no explorer: the hash is shown, not linked.
    expect(await row.locator('a').count()).toBe(0);
  });

  it('shows voucher (batch-settlement) revenue: still in the payer’s channel, then claimed, and the voucher in the payments table', async () => {
    const auth = await authHeader();
    const created = await app.call('POST', '/v1/sites', {
      body: { domain: `vouchers-${Date.now()}.example.com` },
      headers: auth,
    });
    const vouchers = created.body as { site_id: string; site_token: string };
    expect(
      (
        await app.call('PUT', `/v1/sites/${vouchers.site_id}/pricing`, {
          body: { default_price_usd: '0.01', rules: [] },
          headers: auth,
        })
      ).status,
    ).toBe(200);
    expect(
      (await app.call('PATCH', `/v1/sites/${vouchers.site_id}`, { body: { batch_settlement: true }, headers: auth }))
        .status,
    ).toBe(200);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    const offer = batchOffer(
      await app.call('POST', '/v1/gates', {
        body: { url: '/paid-by-voucher' },
        headers: { 'x-site-token': vouchers.site_token },
      }),
    );
    const payment = await testChannel(app, payer, offer.accepted).payment(offer, 10_000n, { deposit: 50_000n });
    expect((await app.call('POST', `/v1/gates/${offer.id}/verify`, { body: { payment } })).status).toBe(200);

    await page.goto(url(`#/payments/${vouchers.site_id}`));
    await page.reload(); // the dashboard loads the site list once: this site was added through the API
    const totals = page.getByRole('region', { name: 'Batch settlement' });
    await expectText(totals, /\$0 claimed to your payout address, \$0\.01 still in 1 payer channel/);
    const row = page.getByRole('table', { name: 'Payments' }).locator('tbody tr').first();
    await expectText(row, /\/paid-by-voucher/);
    await expectText(row, /voucher/);

    // The claimer sweeps the channel to the payout address: the page shows it claimed.
    const run = await app.app.get(ClaimerService).runOnce({ force: true });
    expect(run.claims).toHaveLength(1);
    await page.reload();
    await expectText(
      page.getByRole('region', { name: 'Batch settlement' }),
      /\$0\.01 claimed to your payout address, \$0 still in 0 payer channel/,
    );
    // The rest of this story counts one site and its one payment.
    expect((await app.call('DELETE', `/v1/sites/${vouchers.site_id}`, { headers: auth })).status).toBe(200);
  });

  it('shows who crawls the site: the table, requests by day per action, top paths and a CSV download', async () => {
    const id = await siteId();
    await page.goto(url(`#/crawlers/${id}`));
    await expectText(
      page.getByTestId('no-crawlers'),
      new RegExp(`No requests reported for ${domain.replace(/\./g, '\\.')}`),
    );

    // What a middleware reports with its gate counts (the batched POST /v1/site/gate-counts).
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const seen = (
      crawler: string,
      category: string,
      operator: string | null,
      action: string,
      requests: number,
      extra: Record<string, unknown> = {},
    ) => ({
      day: today,
      crawler,
      category,
      operator,
      action,
      verified: false,
      requests,
      revenue_micros: '0',
      ...extra,
    });
    const reported = await app.call('POST', '/v1/site/gate-counts', {
      headers: { 'x-site-token': siteToken },
      body: {
        counts: [],
        crawlers: [
          seen('person', 'person', null, 'passed', 40),
          seen('Googlebot', 'search-engine', 'Google', 'allowed', 6),
          seen('Googlebot', 'search-engine', 'Google', 'allowed', 2, { day: yesterday }),
          seen('AhrefsBot', 'seo', 'Ahrefs', 'blocked', 3),
          seen('GPTBot', 'ai-training', 'OpenAI', 'charged', 5),
          seen('GPTBot', 'ai-training', 'OpenAI', 'paid', 2, { verified: true, revenue_micros: '100000' }),
          seen('GPTBot', 'ai-training', 'OpenAI', 'token', 1),
        ],
        paths: [
          { day: today, crawler: 'GPTBot', path: '/blog/post-1', requests: 5, verified: true },
          { day: today, crawler: 'GPTBot', path: '/blog/post-2', requests: 3 },
          // A right-to-left override (any crawler can ask for such a path): shown escaped, never reordering the cell.
          { day: today, crawler: 'GPTBot', path: '/blog/\u202Egnp.exe', requests: 1 },
          { day: today, crawler: 'Googlebot', path: '/about', requests: 8 },
        ],
      },
    });
    expect(reported.status).toBe(204);

    await page.reload();
    // GPTBot's reported $0.1 shows as the $0.05 the site's confirmed payments brought: no more.
    const table = page.getByRole('table', { name: 'Crawlers' });
    const cell = (crawler: string, column: string) =>
      table.locator(`tr[data-crawler="${crawler}"] [data-column="${column}"]`);
    await expectText(cell('GPTBot', 'requests'), /^8$/);
    const gptBot = table.locator('tr[data-crawler="GPTBot"]');
    await expectText(gptBot, /OpenAI/);
    await expectText(gptBot, /ai-training/);
    expect(
      await Promise.all(
        ['passed', 'allowed', 'blocked', 'charged', 'paid', 'token', 'revenue', 'verified'].map((column) =>
          cell('GPTBot', column).textContent(),
        ),
      ),
    ).toEqual(['0', '0', '0', '5', '2', '1', '$0.05', '25.0%']);
    expect(await cell('person', 'passed').textContent()).toBe('40');
    expect(await cell('Googlebot', 'allowed').textContent()).toBe('8');
    expect(await cell('AhrefsBot', 'blocked').textContent()).toBe('3');
    expect(await cell('AhrefsBot', 'revenue').textContent()).toBe('$0');

    // The chart is drawn, and its numbers are there as a table too.
    expect(await page.getByTestId('requests-chart').locator('canvas').count()).toBeGreaterThan(0);
    await page.getByText('As a table').click();
    const byDay = page.getByRole('table', { name: 'Requests by day' });
    expect(await byDay.locator(`tr[data-day="${today}"] td`).allTextContents()).toEqual([
      today,
      '40',
      '6',
      '3',
      '5',
      '2',
      '1',
    ]);
    expect(await byDay.locator(`tr[data-day="${yesterday}"] td`).allTextContents()).toEqual([
      yesterday,
      '0',
      '2',
      '0',
      '0',
      '0',
      '0',
    ]);
    expect(await byDay.locator('tbody tr').count()).toBe(30);

    // Top paths open under their crawler's row.
    expect(await page.getByRole('table', { name: 'Top paths of GPTBot' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Top paths of GPTBot' }).click();
    const paths = page.getByRole('table', { name: 'Top paths of GPTBot' });
    // Those it was verified on first: any client can send a crawler's name.
    expect(await paths.locator('tbody tr').allTextContents()).toEqual([
      '/blog/post-15yes',
      '/blog/post-23no',
      '/blog/\\u202egnp.exe1no',
    ]);
    await page.getByRole('button', { name: 'Top paths of GPTBot' }).click();
    expect(await paths.count()).toBe(0);

    // The CSV is fetched with the key in a header and saved from a Blob: no key in any URL.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.url()).toMatch(/^blob:/);
    expect(download.suggestedFilename()).toMatch(
      new RegExp(`^crawlers-${domain.replace(/\./g, '\\.')}-\\d{4}-\\d{2}-\\d{2}-${today}\\.csv$`),
    );
    const csv = readFileSync((await download.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toBe(
      'crawler,category,operator,requests,passed,allowed,blocked,charged,paid,token,revenue_usd,verified_share',
    );
    expect(csv).toContain('\r\nGPTBot,ai-training,OpenAI,8,0,0,0,5,2,1,0.05,0.2500\r\n');
    expect(page.url()).not.toContain((await apiKeyInTab())!);
  });

  it('changes a crawler’s action with one click: the stored policy changes and the row shows what applies', async () => {
    const id = await siteId();
    const storedBots = async () =>
      (await app.call('GET', `/v1/sites/${id}/bot-policy`, { headers: await authHeader() })).body.bots;
    // A crawler named like an Object.prototype member (any middleware with the site token can report
    // one), and the agents the middleware cannot name that show a payment or a token.
    const charged = (crawler: string, category: string) => ({
      day: new Date().toISOString().slice(0, 10),
      crawler,
      category,
      operator: null,
      action: 'charged',
      verified: false,
      requests: 1,
      revenue_micros: '0',
    });
    const reported = await app.call('POST', '/v1/site/gate-counts', {
      headers: { 'x-site-token': siteToken },
      body: {
        counts: [],
        crawlers: [charged('constructor', 'ai-training'), charged('unlisted agent', 'automation')],
        paths: [],
      },
    });
    expect(reported.status).toBe(204);
    await page.goto(url(`#/crawlers/${id}`));
    await page.reload();
    const row = (crawler: string) =>
      page.getByRole('table', { name: 'Crawlers' }).locator(`tr[data-crawler="${crawler}"]`);
    // No policy can hold either name (its PUT is a 422): no buttons, and no error of a change never
    // made (the errors were a plain object); the unlisted agents say what the middleware does with them.
    await expectText(row('unlisted agent').locator('[data-column="action"]'), /^always charged$/);
    expect(await row('unlisted agent').getByRole('button').count()).toBe(0);
    await expectText(row('constructor').locator('[data-column="action"]'), /^–$/);
    expect(await row('constructor').getByRole('button').count()).toBe(0);
    expect(await row('constructor').getByRole('alert').count()).toBe(0);
    // Nothing stored yet: each crawler's category default applies; people have no action.
    await expectPressed(page.getByRole('button', { name: 'Charge GPTBot' }));
    await expectText(row('GPTBot').getByTestId('action-source'), /default for ai-training/);
    await expectPressed(page.getByRole('button', { name: 'Allow Googlebot' }));
    expect(await row('person').getByRole('button').count()).toBe(0);

    await page.getByRole('button', { name: 'Block GPTBot' }).click();
    await expectText(row('GPTBot').getByTestId('action-source'), /set for this crawler/);
    await expectPressed(page.getByRole('button', { name: 'Block GPTBot' }));
    expect(await page.getByRole('button', { name: 'Charge GPTBot' }).getAttribute('aria-pressed')).toBe('false');
    expect(await storedBots()).toEqual({ GPTBot: 'block' });
    await page.reload();
    await expectPressed(page.getByRole('button', { name: 'Block GPTBot' }));

    // Allowing a crawler the gate cannot verify says what it opens; a verified one says nothing.
    expect(await row('AhrefsBot').getByTestId('allow-note').count()).toBe(0);
    await page.getByRole('button', { name: 'Allow AhrefsBot' }).click();
    await expectPressed(page.getByRole('button', { name: 'Allow AhrefsBot' }));
    await expectText(row('AhrefsBot').getByTestId('allow-note'), /cannot verify AhrefsBot, so anyone who sends/);
    expect(await row('Googlebot').getByTestId('allow-note').count()).toBe(0);

    // A category's action, set elsewhere (the CLI, the SDK), shows as the category's.
    expect(
      (
        await app.call('PUT', `/v1/sites/${id}/bot-policy`, {
          body: { categories: { 'search-engine': 'charge' }, bots: { GPTBot: 'block' } },
          headers: await authHeader(),
        })
      ).status,
    ).toBe(200);
    await page.reload();
    await expectPressed(page.getByRole('button', { name: 'Charge Googlebot' }));
    await expectText(row('Googlebot').getByTestId('action-source'), /by category search-engine/);

    // Reset drops the crawler's own action: its category's (here the default) applies again.
    await page.getByRole('button', { name: 'Reset GPTBot to its category’s action' }).click();
    await expectPressed(page.getByRole('button', { name: 'Charge GPTBot' }));
    await expectText(row('GPTBot').getByTestId('action-source'), /default for ai-training/);
    expect(await storedBots()).toEqual({});
    await page.getByRole('button', { name: 'Block GPTBot' }).click();
    await expectPressed(page.getByRole('button', { name: 'Block GPTBot' }));
    expect(await storedBots()).toEqual({ GPTBot: 'block' });
  });

  it('shows a crawl through the middleware, and a Block clicked here reaches the running middleware as a 403 within 30 s', async () => {
    const auth = await authHeader();
    const created = await app.call('POST', '/v1/sites', {
      body: { domain: `crawled-${Date.now()}.example.com` },
      headers: auth,
    });
    const crawled = created.body as { site_id: string; site_token: string; access_token_secret: string };
    expect(
      (
        await app.call('PUT', `/v1/sites/${crawled.site_id}/pricing`, {
          body: { default_price_usd: '0.01', rules: [] },
          headers: auth,
        })
      ).status,
    ).toBe(200);
    // SEO crawlers are blocked by the stored policy, which the middleware pulls with the pricing.
    expect(
      (
        await app.call('PUT', `/v1/sites/${crawled.site_id}/bot-policy`, {
          body: { categories: { seo: 'block' } },
          headers: auth,
        })
      ).status,
    ).toBe(200);
    const options = {
      apiUrl: app.baseUrl,
      siteId: crawled.site_id,
      siteToken: crawled.site_token,
      secret: crawled.access_token_secret,
      logger: { warn: () => undefined },
      // Loopback is the crawler operators' network here (their published IP ranges, served on loopback).
      crawlerIps: await crawlerRanges('loopback.json'),
    };
    const visit = (
      gate: ReturnType<typeof createCrawlgate>,
      path: string,
      userAgent: string,
      headers: Record<string, string> = {},
    ) => gate.handle({ method: 'GET', url: path, headers: { 'user-agent': userAgent, ...headers }, ip: '127.0.0.1' });
    const status = (decision: Decision) => (decision.kind === 'respond' ? decision.status : decision.kind);

    // One middleware crawls and reports as it closes; another keeps running, with the default refresh.
    const crawler = createCrawlgate(options);
    const running = createCrawlgate(options);
    try {
      expect(status(await visit(crawler, '/a', BROWSER))).toBe('pass');
      expect(status(await visit(crawler, '/b', BROWSER))).toBe('pass');
      expect(status(await visit(crawler, '/a', GOOGLEBOT))).toBe('pass');
      expect(status(await visit(crawler, '/a', AHREFSBOT))).toBe(403);
      const offer = await visit(crawler, '/paid', GPTBOT);
      expect(status(offer)).toBe(402);
      const agent = newWallet();
      await fundUsdc(app, agent.address, '1');
      const payment = encodeBase64Json(await signPayment(app, agent, JSON.parse((offer as { body: string }).body)));
      expect(status(await visit(crawler, '/paid', GPTBOT, { 'x-payment': payment }))).toBe('pass-after-payment');
      await crawler.close();

      await page.goto(url(`#/crawlers/${crawled.site_id}`));
      await page.reload();
      const cell = (name: string, column: string) =>
        page.locator(`tr[data-crawler="${name}"] [data-column="${column}"]`);
      await expectText(cell('GPTBot', 'paid'), /^1$/);
      expect(
        await Promise.all(
          [
            cell('person', 'passed'),
            cell('Googlebot', 'allowed'),
            cell('AhrefsBot', 'blocked'),
            cell('GPTBot', 'charged'),
            cell('GPTBot', 'revenue'),
          ].map((c) => c.textContent()),
        ),
      ).toEqual(['2', '1', '1', '1', '$0.01']);
      await expectText(cell('AhrefsBot', 'action'), /by category seo/);

      expect(status(await visit(running, '/paid', GPTBOT))).toBe(402);
      await page.getByRole('button', { name: 'Block GPTBot' }).click();
      await expectPressed(page.getByRole('button', { name: 'Block GPTBot' }));
      // No restart: the running middleware's next pull of the pricing (every 15 s by default) brings the block.
      const deadline = Date.now() + 30_000;
      let answered = status(await visit(running, '/paid', GPTBOT));
      while (answered !== 403 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        answered = status(await visit(running, '/paid', GPTBOT));
      }
      expect(answered).toBe(403);
    } finally {
      await crawler.close();
      await running.close();
      await app.call('DELETE', `/v1/sites/${crawled.site_id}`, { headers: auth });
    }
    // The next tests start from a tab that no longer lists this site.
    await page.goto(url('#/overview'));
    await page.reload();
    // The middleware's refresh may take its whole 30 s bound, on top of the crawl.
  }, 90_000);

  it('counts six kinds of visitors crawling through the middleware, in the API and on the Crawlers page', async () => {
    const auth = await authHeader();
    const created = await app.call('POST', '/v1/sites', {
      body: { domain: `six-${Date.now()}.example.com` },
      headers: auth,
    });
    const site = created.body as { site_id: string; site_token: string; access_token_secret: string };
    expect(
      (
        await app.call('PUT', `/v1/sites/${site.site_id}/pricing`, {
          body: { default_price_usd: '0.01', rules: [] },
          headers: auth,
        })
      ).status,
    ).toBe(200);
    // Stored policy: SEO blocked; ChatGPT agent and ChatGPT-User allowed, which only a valid signature earns.
    const policy = { categories: { seo: 'block' }, bots: { 'ChatGPT agent': 'allow', 'ChatGPT-User': 'allow' } };
    expect(
      (await app.call('PUT', `/v1/sites/${site.site_id}/bot-policy`, { body: policy, headers: auth })).status,
    ).toBe(200);
    // https://chatgpt.com's key directory is a loopback server (no network here); the keys are ours.
    const chatgpt = await startAgentDirectory();
    const directoryFetch: typeof fetch = async (input, init) => {
      const target = new URL(String(input));
      if (target.origin !== CHATGPT) throw new TypeError(`not routed: ${target.origin}`);
      return fetch(chatgpt.origin + target.pathname, init);
    };
    // One Express site behind createCrawlgate; the agent signs for http://127.0.0.1:<port>, the site's alias here.
    const port = await freePort();
    const gate = crawlgateExpress({
      apiUrl: app.baseUrl,
      siteId: site.site_id,
      siteToken: site.site_token,
      secret: site.access_token_secret,
      logger: { warn: () => undefined },
      // Loopback is the crawler operators' network here: Googlebot and GPTBot verify by their address.
      crawlerIps: await crawlerRanges('loopback.json'),
      webBotAuth: {
        fetch: directoryFetch,
        directoryTimeoutMs: 10_000,
        allowLoopbackDirectories: true,
        hosts: [`127.0.0.1:${port}`],
      },
    });
    const server = express()
      .use(gate)
      .get('/:page', (req, res) => void res.type('text/html').send(`<h1>${req.params.page}</h1>`))
      .listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const origin = `http://127.0.0.1:${port}`;
    const visit = (path: string, userAgent: string, headers: Record<string, string> = {}) =>
      fetch(origin + path, { headers: { 'user-agent': userAgent, ...headers } });
    try {
      expect((await visit('/a', BROWSER)).status).toBe(200);
      expect((await visit('/b', BROWSER)).status).toBe(200);
      expect((await visit('/a', GOOGLEBOT)).status).toBe(200);
      expect((await visit('/a', AHREFSBOT)).status).toBe(403);
      const offer = await visit('/paid', GPTBOT);
      expect(offer.status).toBe(402);
      const payer = newWallet();
      await fundUsdc(app, payer.address, '1');
      const payment = encodeBase64Json(await signPayment(app, payer, await offer.json()));
      expect((await visit('/paid', GPTBOT, { 'x-payment': payment })).status).toBe(200);
      // ChatGPT-User's User-Agent without a signature: unverified, so charged although the policy allows ChatGPT-User.
      expect((await visit('/spoof', CHATGPT_USER)).status).toBe(402);
      // @crawlgate/agent signing as https://chatgpt.com: verified ChatGPT agent, allowed by the stored policy, never paying.
      const payments: PaymentEvent[] = [];
      const agent = createAgent({
        account: newWallet(),
        maxPriceUsd: '0.05',
        budgetUsd: '1',
        networks: [{ network: 'local', asset: app.chain.usdc }],
        onPayment: (event) => payments.push(event),
        webBotAuth: { key: chatgpt.key, signatureAgent: CHATGPT },
      });
      const signed = await agent.fetch(`${origin}/signed`);
      expect([signed.status, await signed.text(), payments]).toEqual([200, '<h1>signed</h1>', []]);
      // close() sends the counts at once instead of within the next 10 s.
      await gate.close();
      const crawlStopped = Date.now();

      const answer = await app.call('GET', `/v1/sites/${site.site_id}/crawlers`, { headers: auth });
      expect(answer.status).toBe(200);
      const counts = (answer.body.crawlers as CrawlerView[])
        .map(({ crawler, requests, passed, allowed, blocked, charged, paid, token, revenue_usd, verified_share }) => ({
          crawler,
          requests,
          passed,
          allowed,
          blocked,
          charged,
          paid,
          token,
          revenue_usd,
          verified_share,
        }))
        .sort((a, b) => a.crawler.localeCompare(b.crawler));
      const row = (
        crawler: string,
        requests: number,
        actions: Partial<Record<'passed' | 'allowed' | 'blocked' | 'charged' | 'paid', number>>,
        revenue_usd: string,
        verified_share: string,
      ) => ({
        crawler,
        requests,
        passed: 0,
        allowed: 0,
        blocked: 0,
        charged: 0,
        paid: 0,
        token: 0,
        ...actions,
        revenue_usd,
        verified_share,
      });
      const expected = [
        row('AhrefsBot', 1, { blocked: 1 }, '0', '0.0000'),
        row('ChatGPT agent', 1, { allowed: 1 }, '0', '1.0000'),
        row('ChatGPT-User', 1, { charged: 1 }, '0', '0.0000'),
        row('Googlebot', 1, { allowed: 1 }, '0', '1.0000'),
        row('GPTBot', 2, { charged: 1, paid: 1 }, '0.01', '1.0000'),
        row('person', 2, { passed: 2 }, '0', '0.0000'),
      ].sort((a, b) => a.crawler.localeCompare(b.crawler));
      expect(counts).toEqual(expected);

      // The page shows the same numbers; expectText waits at most 10 s for each, well inside 15 s of the crawl.
      await page.goto(url(`#/crawlers/${site.site_id}`));
      await page.reload();
      const cell = (name: string, column: string) =>
        page.locator(`tr[data-crawler="${name}"] [data-column="${column}"]`);
      for (const crawler of expected) {
        for (const column of ['requests', 'passed', 'allowed', 'blocked', 'charged', 'paid'] as const)
          await expectText(cell(crawler.crawler, column), new RegExp(`^${crawler[column]}$`));
        await expectText(
          cell(crawler.crawler, 'revenue'),
          new RegExp(`^\\$${crawler.revenue_usd.replace('.', '\\.')}$`),
        );
        await expectText(
          cell(crawler.crawler, 'verified'),
          new RegExp(`^${(Number(crawler.verified_share) * 100).toFixed(1).replace('.', '\\.')}%$`),
        );
      }
      expect(Date.now() - crawlStopped).toBeLessThan(15_000);
    } finally {
      await gate.close();
      await new Promise((resolve) => server.close(resolve));
      await chatgpt.close();
      await app.call('DELETE', `/v1/sites/${site.site_id}`, { headers: auth });
    }
    await page.goto(url('#/overview'));
    await page.reload();
  }, 90_000);

  it('says so when a change or a load fails (here: the site was deleted in another tab)', async () => {
    const auth = await authHeader();
    const doomed = await app.call('POST', '/v1/sites', {
      body: { domain: `gone-${Date.now()}.example.com` },
      headers: auth,
    });
    const today = new Date().toISOString().slice(0, 10);
    const seen = {
      day: today,
      crawler: 'ClaudeBot',
      category: 'ai-training',
      operator: 'Anthropic',
      action: 'charged',
      verified: false,
      requests: 2,
      revenue_micros: '0',
    };
    expect(
      (
        await app.call('POST', '/v1/site/gate-counts', {
          body: { counts: [], crawlers: [seen] },
          headers: { 'x-site-token': doomed.body.site_token },
        })
      ).status,
    ).toBe(204);
    // A reload, so the dashboard lists the site just made over the API.
    await page.goto(url(`#/crawlers/${doomed.body.site_id}`));
    await page.reload();
    await expectPressed(page.getByRole('button', { name: 'Charge ClaudeBot' }));

    expect((await app.call('DELETE', `/v1/sites/${doomed.body.site_id}`, { headers: auth })).status).toBe(200);
    await page.getByRole('button', { name: 'Block ClaudeBot' }).click();
    await expectText(page.locator('tr[data-crawler="ClaudeBot"] [role="alert"]'), /not found/i);
    // What was stored still shows: the click changed nothing.
    await expectPressed(page.getByRole('button', { name: 'Charge ClaudeBot' }));
    const failures = page.locator('main [role="alert"]', { hasText: /not found/i });
    expect(await failures.count()).toBe(1);
    await page.getByRole('button', { name: 'Download CSV' }).click();
    await expectText(page.locator('.row [role="alert"]'), /not found/i);
    // The page's own load fails too when the range changes; what it showed stays, under the error.
    await page.getByLabel('Range').selectOption('7');
    await expectText(page.locator('main > section > [role="alert"]'), /not found/i);
    expect(await failures.count()).toBe(3);
    expect(await page.getByRole('table', { name: 'Crawlers' }).locator('tr[data-crawler="ClaudeBot"]').count()).toBe(1);
    // The next tests start from a tab that no longer lists the deleted site.
    await page.goto(url('#/overview'));
    await page.reload();
  });

  it('lays out every page at 1280 and 375 px: labelled controls, no sideways scrolling, a screenshot each', async () => {
    const id = await siteId();
    const pages: [name: string, fragment: string, loaded: () => Promise<void>][] = [
      ['overview', '#/overview', () => expectText(page.getByTestId('revenue'), /\$0\.05/)],
      ['sites', '#/sites', () => expectText(page.getByRole('table', { name: 'Sites' }), new RegExp(domain))],
      ['pricing', `#/pricing/${id}`, () => expectText(page.getByTestId('path-result'), /costs/)],
      [
        'payments',
        `#/payments/${id}`,
        () => expectText(page.getByRole('table', { name: 'Payments' }), /\/blog\/post-1/),
      ],
      ['crawlers', `#/crawlers/${id}`, () => expectText(page.getByRole('table', { name: 'Crawlers' }), /GPTBot/)],
      ['settings', '#/settings', () => expectText(page.locator('main'), /Signed in as/)],
    ];
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, fragment, loaded] of pages) {
        await page.goto(url(fragment));
        await loaded();
        expect({ name, width, unlabelled: await unlabelledControls(page) }).toEqual({ name, width, unlabelled: [] });
        expect({ name, width, ...(await sidewaysOverflow(page)) }).toEqual({
          name,
          width,
          overflow: 0,
          stickingOut: [],
        });
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 720 });

    // The sign-in page, in a tab of its own: the key lives in each tab's sessionStorage.
    const signedOut = await browser.newPage({ viewport: { width: 375, height: 800 } });
    await signedOut.goto(url());
    await expectText(signedOut.locator('main'), /Publisher dashboard/);
    expect(await unlabelledControls(signedOut)).toEqual([]);
    expect(await sidewaysOverflow(signedOut)).toEqual({ overflow: 0, stickingOut: [] });
    await signedOut.screenshot({ path: join(SCREENSHOTS, 'login-375.png'), fullPage: true });
    await signedOut.close();
  });

  it('works from the keyboard: links, a form sent with Enter, dialogs that take focus and close on Escape', async () => {
    const kbdDomain = `kbd-${Date.now()}.example.com`;
    await page.goto(url('#/overview'));
    await expectText(page.getByTestId('revenue'), /\$/);
    await tabTo((el) => el.text === 'Sites');
    await page.keyboard.press('Enter');
    await expectText(page.locator('main h2'), /Sites/);

    await tabTo((el) => el.name === 'domain');
    await page.keyboard.type(kbdDomain);
    await page.keyboard.press('Enter');
    await expectText(page.locator('.once-only'), /Shown once/);
    // What just appeared has the focus, so the values are one Tab away.
    await expectFocus((el) => el.text === 'Copy');
    await tabTo((el) => el.text === 'I have stored them');
    await page.keyboard.press('Enter');
    expect(await page.locator('.once-only').count()).toBe(0);

    const row = page.locator(`tr[data-site="${kbdDomain}"]`);
    await row.getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await expectFocus((el) => el.name === 'confirm-domain');
    await page.keyboard.press('Escape');
    expect(await page.getByRole('dialog').count()).toBe(0);
    await expectFocus((el) => el.text === 'Delete');

    await page.keyboard.press('Enter');
    await page.keyboard.type(kbdDomain);
    await tabTo((el) => el.text === 'Delete site');
    await page.keyboard.press('Enter');
    await row.waitFor({ state: 'detached', timeout: 10_000 });
    expect(
      (await app.call('GET', '/v1/sites', { headers: await authHeader() })).body.items.map(
        (site: { domain: string }) => site.domain,
      ),
    ).toEqual([domain]);
  });

  it('rotates the site token after asking, and the old one stops working', async () => {
    await page.goto(url('#/sites'));
    await page.locator(`tr[data-site="${domain}"]`).getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = (await page.locator('[data-secret="Site token"]').textContent())!;
    expect(rotated).toMatch(/^st_/);
    expect(rotated).not.toBe(siteToken);
    expect(
      (await app.call('POST', '/v1/gates', { body: { url: '/x' }, headers: { 'x-site-token': siteToken } })).status,
    ).toBe(401);
    expect(
      (await app.call('POST', '/v1/gates', { body: { url: '/x' }, headers: { 'x-site-token': rotated } })).status,
    ).toBe(402);
    siteToken = rotated;
    await page.getByRole('button', { name: 'I have stored them' }).click();
  });

  it('rotates the access-token secret with its grace period, or revokes the current one at once when it leaked', async () => {
    const sites = (await app.call('GET', '/v1/sites', { headers: await authHeader() })).body.items;
    const siteId = sites.find((one: { domain: string }) => one.domain === domain).site_id;
    const tokenOf = (secret: string, kid: string) => {
      const now = Math.floor(Date.now() / 1000);
      return signAccessToken(
        { gate_id: randomUUID(), site_id: siteId, url: '/paid', kid, iat: now, exp: now + 600 },
        secret,
      );
    };
    const verifies = async (token: string) =>
      (await app.call('POST', '/v1/access-tokens/verify', { body: { token }, headers: { 'x-site-token': siteToken } }))
        .body.valid;
    const rotate = async (choice: RegExp) => {
      await page.locator(`tr[data-site="${domain}"]`).getByRole('button', { name: 'Rotate secret' }).click();
      const dialog = page.getByRole('dialog');
      // Focus lands on Cancel, not on an option an arrow key would change.
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
      await dialog.getByRole('radio', { name: choice }).check();
      await dialog.getByRole('button', { name: 'Rotate' }).click();
      const secret = (await page.locator('[data-secret="Access-token secret"]').textContent())!;
      const kid = (await page.locator('[data-secret="Key id (kid)"]').textContent())!;
      const shown = (await page.locator('.once-only').textContent())!;
      await page.getByRole('button', { name: 'I have stored them' }).click();
      return { secret, kid, shown };
    };
    await page.goto(url('#/sites'));

    // The default keeps the current secret verifying for the grace period, and says until when.
    const first = await rotate(/grace period/);
    expect(first.shown).toMatch(/Tokens signed with the previous secret verify until/);
    const second = await rotate(/grace period/);
    expect(await verifies(tokenOf(first.secret, first.kid))).toBe(true);

    // A leaked secret is revoked at once: its tokens stop verifying, the new secret's verify.
    const third = await rotate(/Revoke/);
    expect(third.shown).toMatch(/The previous secret stopped verifying at once/);
    expect(await verifies(tokenOf(second.secret, second.kid))).toBe(false);
    expect(await verifies(tokenOf(first.secret, first.kid))).toBe(false);
    expect(await verifies(tokenOf(third.secret, third.kid))).toBe(true);
  });

  it('deletes a site only once its domain is typed', async () => {
    await page.locator(`tr[data-site="${domain}"]`).getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('button', { name: 'Delete site' });
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel(/to confirm/).fill('other.example.com');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel(/to confirm/).fill(domain);
    await confirm.click();
    await expectText(page.getByRole('table', { name: 'Sites' }), /No sites yet/);
    expect((await app.call('GET', '/v1/sites', { headers: await authHeader() })).body.items).toEqual([]);
  });

  it('rotates the API key: the new one is shown once and the dashboard keeps working with it', async () => {
    const before = await authHeader();
    await page.goto(url('#/settings'));
    await page.getByRole('button', { name: 'Rotate API key…' }).click();
    await page.getByRole('button', { name: 'Rotate API key' }).click();
    const shown = await page.locator('[data-secret="API key"]').textContent();
    expect(shown).toMatch(/^xk_pub_/);
    expect(await apiKeyInTab()).toBe(shown);
    expect((await app.call('GET', '/v1/publishers/me', { headers: before })).status).toBe(401);
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await page.reload();
    await expectText(page.locator('main'), new RegExp(email));
  });

  it('changes the password with the current one; the key rotates with it and the dashboard keeps working', async () => {
    const before = await authHeader();
    await page.goto(url('#/settings'));
    const form = page.getByRole('form', { name: 'Password' });
    await form.getByLabel('Current password').fill('not my password');
    await form.getByLabel('New password').fill('a brand new password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectText(form.getByRole('alert'), /current_password/);
    await form.getByLabel('Current password').fill(password);
    await form.getByLabel('New password').fill('short');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectText(form.locator('[data-field="new_password"]'), /8/);
    await form.getByLabel('New password').fill('a brand new password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expectText(form.getByRole('status'), /Password changed/);
    expect((await app.call('GET', '/v1/publishers/me', { headers: before })).status).toBe(401);
    const login = (tried: string) => app.call('POST', '/v1/publishers/login', { body: { email, password: tried } });
    expect((await login(password)).status).toBe(401);
    password = 'a brand new password';
    await page.reload();
    await expectText(page.locator('main'), new RegExp(`Signed in as ${email}`));
  });

  it('signs out, which ends the key on the server too, and signs in again with email and password (which issues a new key)', async () => {
    const before = await authHeader();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectText(page.locator('main'), /Signing in issues a new API key/);
    expect(await apiKeyInTab()).toBeNull();
    // A key copied from the tab before the sign-out opens nothing after it.
    expect((await app.call('GET', '/v1/publishers/me', { headers: before })).status).toBe(401);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).last().click();
    await expectText(page.getByRole('alert'), /./);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).last().click();
    // Back on the page it left: the settings.
    await expectText(page.locator('main'), new RegExp(`Signed in as ${email}`));
    expect(await apiKeyInTab()).toMatch(/^xk_pub_/);
  });

  it('logged no error and broke no content-security rule along the way', () => {
    expect(problems).toEqual([]);
  });

  /** The element with the focus, as the tests ask about it; `outline` shows that the focus is visible. */
  async function focused(): Promise<FocusedElement> {
    return page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return {
        tag: el?.tagName.toLowerCase() ?? '',
        text: el?.textContent?.trim() ?? '',
        name: el?.getAttribute('name') ?? '',
        outline: el ? getComputedStyle(el).outlineStyle : '',
      };
    });
  }

  /** Presses Tab (at most 60 times) until the focused element is the one wanted; each stop must show its focus. */
  async function tabTo(wanted: (el: FocusedElement) => boolean): Promise<void> {
    for (let presses = 0; presses < 60; presses++) {
      await page.keyboard.press('Tab');
      const el = await focused();
      if (el.tag !== 'body')
        expect({ ...el, outline: el.outline === 'none' ? 'none' : 'visible' }).toEqual({ ...el, outline: 'visible' });
      if (wanted(el)) return;
    }
    throw new Error(`Tab never reached the element wanted (last: ${JSON.stringify(await focused())})`);
  }

  /** Waits (up to 5 s) for the focus to land on the element wanted. */
  async function expectFocus(wanted: (el: FocusedElement) => boolean): Promise<void> {
    const deadline = Date.now() + 5_000;
    let el = await focused();
    while (!wanted(el) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      el = await focused();
    }
    expect(wanted(el) ? 'focused' : `focus is on ${JSON.stringify(el)}`).toBe('focused');
  }

  async function authHeader(): Promise<{ authorization: string }> {
    return { authorization: `Bearer ${await apiKeyInTab()}` };
  }

  async function siteId(): Promise<string> {
    const sites = await app.call('GET', '/v1/sites', { headers: await authHeader() });
    return (sites.body.items as { site_id: string; domain: string }[]).find((site) => site.domain === domain)!.site_id;
  }
});

interface FocusedElement {
  tag: string;
  text: string;
  name: string;
  outline: string;
}

/** Inputs, selects and buttons that a screen reader could not name. */
function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('input, select, textarea, button')]
      .filter((el) => {
        const named = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
        const labels = (el as HTMLInputElement).labels;
        return el.tagName === 'BUTTON' ? !named && !el.textContent?.trim() : !named && !labels?.length;
      })
      .map((el) => el.outerHTML.slice(0, 160)),
  );
}

/**
 * How far the page scrolls sideways (a phone-width page should not at all), and the elements that
 * stick out past the window other than inside a box that scrolls on its own (a wide table).
 */
function sidewaysOverflow(page: Page): Promise<{ overflow: number; stickingOut: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const scrollsItself = (el: Element) => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(el).overflowX);
    const insideScroller = (el: Element) => {
      for (let parent = el.parentElement; parent && parent !== document.body; parent = parent.parentElement)
        if (scrollsItself(parent)) return true;
      return false;
    };
    const stickingOut = [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5 && !insideScroller(el))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.className ? '.' + String(el.className).replace(/ /g, '.') : ''} (right edge ${Math.round(el.getBoundingClientRect().right)} px)`,
      );
    return { overflow: document.documentElement.scrollWidth - width, stickingOut };
  });
}

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const CHATGPT = 'https://chatgpt.com';
const CHATGPT_USER =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

/** Waits (up to 10 s) for a toggle button to be pressed; fails with what it saw. */
async function expectPressed(locator: import('playwright-core').Locator): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen: string | null = null;
  while (Date.now() < deadline) {
    seen = await locator.getAttribute('aria-pressed', { timeout: 1_000 }).catch(() => null);
    if (seen === 'true') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected ${locator} to be pressed, saw aria-pressed=${JSON.stringify(seen)}`);
}

/** Waits (up to 10 s) for the element to exist and its text to match; fails with what it saw. */
async function expectText(locator: import('playwright-core').Locator, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 10_000;
  let seen = '';
  while (Date.now() < deadline) {
    seen =
      (await locator
        .first()
        .textContent({ timeout: 1_000 })
        .catch(() => null)) ?? '';
    if (pattern.test(seen)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected ${pattern} in ${locator}, saw ${JSON.stringify(seen)}`);
}
