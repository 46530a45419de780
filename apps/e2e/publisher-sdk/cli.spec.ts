import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerPublisher, type TestPublisher } from '../../../apps/api/test/fixtures';
import { startTestApp, type TestApp } from '../../../apps/api/test/test-app';
import { cliRunner, fakeTerminal, newDomain, pricingView, refusingUrl } from './support';

describe('crawlgate CLI', () => {
  let app: TestApp;
  let home: string;
  let publisher: TestPublisher;
  /** Every output of every command but `login --show-key`: none may hold an API key. */
  const outputs: string[] = [];
  const keys = new Set<string>();

  const configFile = () => join(home, 'crawlgate', 'config.json');
  const savedConfig = async () =>
    JSON.parse(await readFile(configFile(), 'utf8')) as { apiUrl: string; apiKey: string };

  const crawlgate = cliRunner(
    () => home,
    (args, run) => void (args.includes('--show-key') || outputs.push(run.stdout + run.stderr)),
  );

  const loginArgs = () => ['login', '--api', app.baseUrl, '--email', publisher.email, '--password', publisher.password];

  beforeAll(async () => {
    app = await startTestApp();
    home = await mkdtemp(join(tmpdir(), 'crawlgate-cli-'));
    publisher = await registerPublisher(app);
    keys.add(publisher.apiKey);
  }, 60_000);
  afterAll(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  }, 60_000);

  describe('help and usage', () => {
    it('--help lists every command and exits 0', async () => {
      const run = await crawlgate(['--help']);
      expect(run.code).toBe(0);
      for (const command of [
        'login',
        'sites create <domain>',
        'sites list',
        'sites rotate-token <site>',
        'pricing set <site>',
        'pricing show <site>',
        'stats [<site>]',
      ]) {
        expect(run.stdout).toContain(command);
      }
    });

    it('has help for groups and commands', async () => {
      expect((await crawlgate(['sites', '--help'])).stdout).toContain('crawlgate sites rotate-token <site>');
      const pricing = await crawlgate(['pricing', 'set', '--help']);
      expect(pricing.code).toBe(0);
      expect(pricing.stdout).toMatch(/Usage: crawlgate pricing set <site> --file/);
      expect(pricing.stdout).toContain('default_price_usd');
    });

    it.each([
      [[], /No command given/],
      [['publish'], /Unknown command "publish"/],
      [['sites'], /sites needs a command: create, list, delete, rotate-token, rotate-secret/],
      [['sites', 'remove', 'x'], /Unknown command "sites remove"/],
      [['sites', 'list', '--verbose'], /Unknown option '--verbose'/],
      [['sites', 'create'], /Expected <domain>, got none/],
      [['pricing', 'set', 'site-1'], /--file .* is required/],
      [['login', '--api', 'http://127.0.0.1:9'], /--email <email> is required/],
      [
        ['login', '--api', 'not a url', '--email', 'a@example.com', '--password', 'x'],
        /apiUrl must be an absolute http\(s\) URL/,
      ],
    ])('%j is a usage error: exit 2', async (args, message) => {
      const run = await crawlgate(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(/--help` for usage/);
    });
  });

  describe('before login', () => {
    it('commands that need the key say how to log in', async () => {
      const run = await crawlgate(['sites', 'list']);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/No API URL: run `crawlgate login --api <url> --email <email>`/);
    });

    it('login without a password off a terminal fails without calling the API', async () => {
      const run = await crawlgate(['login', '--api', app.baseUrl, '--email', publisher.email]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/No password: pass --password, set CRAWLGATE_PASSWORD/);
    });

    it('a wrong password prints the API detail, exits 1 and saves nothing', async () => {
      const run = await crawlgate([
        'login',
        '--api',
        app.baseUrl,
        '--email',
        publisher.email,
        '--password',
        'wrong password',
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        'error: Invalid email or password (HTTP 401)\nLog in again with `crawlgate login`, or check CRAWLGATE_API_KEY.\n',
      );
      await expect(stat(configFile())).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('an unreachable API is reported as such', async () => {
      const url = await refusingUrl();
      const run = await crawlgate(['login', '--api', url, '--email', publisher.email, '--password', 'x']);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`error: Could not reach ${url}/v1: ECONNREFUSED\n`);
    });
  });

  describe('logged in', () => {
    let siteId: string;

    it('login saves the URL and a fresh key in a 0600 file, without printing the key', async () => {
      const run = await crawlgate(loginArgs());
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain(`Logged in to ${app.baseUrl}.`);
      expect(run.stdout).toContain(configFile());
      const config = await savedConfig();
      keys.add(config.apiKey);
      expect(config).toEqual({ apiUrl: app.baseUrl, apiKey: expect.stringMatching(/^xk_pub_/) });
      expect(config.apiKey).not.toBe(publisher.apiKey);
      expect((await stat(configFile())).mode & 0o777).toBe(0o600);
      expect((await stat(join(home, 'crawlgate'))).mode & 0o777).toBe(0o700);
    });

    it('login --show-key prints the new key, which is the saved one; the password may come from the environment', async () => {
      const run = await crawlgate(['login', '--email', publisher.email, '--show-key', '--json'], {
        CRAWLGATE_PASSWORD: publisher.password,
      });
      expect(run.code).toBe(0);
      const printed = JSON.parse(run.stdout);
      const config = await savedConfig();
      keys.add(config.apiKey);
      expect(printed).toEqual({
        publisher_id: publisher.publisherId,
        api_url: app.baseUrl,
        config_path: configFile(),
        api_key: config.apiKey,
      });
      expect((await stat(configFile())).mode & 0o777).toBe(0o600);
    });

    it('login prompts for the password on a terminal, on stderr, so --json output stays clean', async () => {
      const stdin = fakeTerminal();
      const running = crawlgate(['login', '--email', publisher.email, '--json'], {}, stdin);
      setImmediate(() => stdin.write(`${publisher.password}\r`));
      const run = await running;
      expect(run).toMatchObject({ code: 0, stderr: 'Password: \n' });
      expect(JSON.parse(run.stdout)).toEqual({
        publisher_id: publisher.publisherId,
        api_url: app.baseUrl,
        config_path: configFile(),
      });
      keys.add((await savedConfig()).apiKey);
    });

    it('sites create prints the site token and secret once', async () => {
      const domain = newDomain();
      const run = await crawlgate(['sites', 'create', domain, '--name', 'My Blog']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(new RegExp(`^Created site [0-9a-f-]{36} for ${domain.replace(/\./g, '\\.')}\\.`));
      expect(run.stdout).toMatch(/site token +st_\S+/);
      expect(run.stdout).toMatch(/access-token secret +cgsec_\S+/);

      const json = await crawlgate(['sites', 'create', newDomain(), '--json']);
      expect(json.code).toBe(0);
      const site = JSON.parse(json.stdout);
      expect(site).toMatchObject({
        site_token: expect.stringMatching(/^st_/),
        access_token_secret: expect.stringMatching(/^cgsec_/),
        rules_count: 0,
      });
      siteId = site.site_id;
    });

    it('sites create of a taken domain prints the 409 detail', async () => {
      const domain = newDomain();
      expect((await crawlgate(['sites', 'create', domain])).code).toBe(0);
      const again = await crawlgate(['sites', 'create', domain]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^error: .+ \(HTTP 409\)\n$/);
    });

    it('sites list prints a table, or the API answer with --json', async () => {
      const run = await crawlgate(['sites', 'list']);
      expect(run.code).toBe(0);
      const [header, ...rows] = run.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^SITE ID +DOMAIN +NAME +DEFAULT USD +RULES +CREATED$/);
      expect(rows).toHaveLength(3);
      expect(run.stdout).toMatch(/My Blog +0 +0 +\d{4}-/);

      const json = JSON.parse((await crawlgate(['sites', 'list', '--json'])).stdout);
      expect(json.items).toHaveLength(3);
      expect(json.items.map((s: { site_id: string }) => s.site_id)).toContain(siteId);
    });

    it('sites rotate-token prints the new token', async () => {
      const run = await crawlgate(['sites', 'rotate-token', siteId]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^New site token for ${siteId} .*\\n  st_\\S+\\n$`));
    });

    it('pricing set reads a JSON file; pricing show --json prints the rules', async () => {
      const file = join(home, 'pricing.json');
      await writeFile(
        file,
        JSON.stringify({
          default_price_usd: '0.002',
          rules: [
            { path: '/articles/*', price_usd: 0.01 },
            { path: '/about', price_usd: '0' },
          ],
        }),
      );
      const run = await crawlgate(['pricing', 'set', siteId, '--file', file]);
      expect(run).toEqual({ code: 0, stdout: `Pricing of ${siteId} replaced: 2 rules applied.\n`, stderr: '' });

      const show = await crawlgate(['pricing', 'show', siteId, '--json']);
      expect(show.code).toBe(0);
      expect(JSON.parse(show.stdout)).toEqual(
        pricingView(siteId, '0.002', [
          ['/articles/*', '0.01'],
          ['/about', '0'],
        ]),
      );
    });

    it('pricing set reads a YAML file; pricing show prints a table', async () => {
      const file = join(home, 'pricing.yaml');
      await writeFile(
        file,
        [
          '# prices in USD',
          'default_price_usd: 0.001',
          'rules:',
          '  - path: /premium/*   # the good stuff',
          '    price_usd: "0.05"',
          '',
        ].join('\n'),
      );
      const run = await crawlgate(['pricing', 'set', siteId, '-f', file]);
      expect(run).toMatchObject({ code: 0, stdout: `Pricing of ${siteId} replaced: 1 rule applied.\n` });

      const show = await crawlgate(['pricing', 'show', siteId]);
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(
        new RegExp(`^Site +${siteId}\nDefault USD +0\\.001\nVersion +\\d+\nUpdated +\\d{4}-`),
      );
      expect(show.stdout).toMatch(/\n\n# {2}PATH +USD\n0 {2}\/premium\/\* {2}0\.05\n$/);
    });

    it('a bad pricing file prints each 422 item and leaves the pricing alone', async () => {
      const file = join(home, 'bad.yml');
      await writeFile(file, 'default_price_usd: 0.01\nrules:\n  - path: /x/*\n    price_usd: 1.5\n  - price_usd: 0\n');
      const run = await crawlgate(['pricing', 'set', siteId, '--file', file]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: the API rejected the request \(HTTP 422\):\n/);
      expect(run.stderr).toMatch(/\n {2}body\.rules\.0\.price_usd: .+ \[price_range, got 1\.5\]\n/);
      expect(run.stderr).toMatch(/\n {2}body\.rules\.1\.path: .+ \[missing\]\n/);
      expect(JSON.parse((await crawlgate(['pricing', 'show', siteId, '--json'])).stdout).rules).toEqual([
        { path: '/premium/*', price_usd: '0.05' },
      ]);
    });

    it('an unreadable or malformed pricing file is exit 1 with the reason', async () => {
      const missing = await crawlgate(['pricing', 'set', siteId, '--file', join(home, 'nope.json')]);
      expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/Cannot read .*nope\.json: ENOENT/) });
      const file = join(home, 'broken.yaml');
      await writeFile(file, 'default_price_usd: 0.01\nrules: [1, 2]\n');
      const broken = await crawlgate(['pricing', 'set', siteId, '--file', file]);
      expect(broken).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/broken\.yaml: line 2: .*flow collections/),
      });
      const list = join(home, 'list.json');
      await writeFile(list, '[]');
      expect((await crawlgate(['pricing', 'set', siteId, '--file', list])).stderr).toMatch(/must hold an object/);
    });

    it('stats prints the summary and every day; --json the API answer', async () => {
      const run = await crawlgate(['stats', siteId, '--from', '2026-01-01', '--to', '2026-01-03']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/Days \(UTC\) +2026-01-01 to 2026-01-03\nRevenue USD +0\n/);
      expect(run.stdout).toContain('Top paths: none yet');
      expect(run.stdout).toMatch(
        /DAY +USD +PAID +GATES\n2026-01-01 +0 +0 +0\n2026-01-02 +0 +0 +0\n2026-01-03 +0 +0 +0\n$/,
      );

      const json = await crawlgate(['stats', siteId, '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({
        site_id: siteId,
        paid_gates: 0,
        conversion: '0',
        by_day: expect.any(Array),
      });
    });

    it('stats without a site covers all the publisher’s sites, each top path named by its site', async () => {
      const run = await crawlgate(['stats', '--from', '2026-01-01', '--to', '2026-01-02']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Sites +all\nDays \(UTC\) +2026-01-01 to 2026-01-02\n/);
      const json = await crawlgate(['stats', '--json']);
      const report = JSON.parse(json.stdout);
      expect(report).toMatchObject({ paid_gates: 0, top_paths: [], by_day: expect.any(Array) });
      expect(report).not.toHaveProperty('site_id');
      const extra = await crawlgate(['stats', siteId, 'more']);
      expect(extra.code).toBe(2);
      expect(extra.stderr).toMatch(/Expected \[<site>\], got/);
    });

    it('stats with a bad date or an unknown site is exit 1 with the detail; --json errors are JSON', async () => {
      const bad = await crawlgate(['stats', siteId, '--from', 'yesterday']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/query\.from: from must be a date/);
      const unknown = await crawlgate(['stats', '00000000-0000-4000-8000-000000000000', '--json']);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(JSON.parse(unknown.stderr)).toEqual({ status: 404, detail: 'Site not found' });
    });

    it('never sends the saved key to another API named by --api', async () => {
      const run = await crawlgate(['sites', 'list', '--api', 'http://127.0.0.1:9']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/Not logged in to http:\/\/127\.0\.0\.1:9/);
    });

    it('never sends CRAWLGATE_API_KEY to another API named by --api than CRAWLGATE_API_URL', async () => {
      const key = (await savedConfig()).apiKey;
      const seen: (string | undefined)[] = [];
      const other = createServer((request, response) => {
        seen.push(request.headers.authorization ?? request.headers['x-api-key']?.toString());
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[]}');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      try {
        const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
        const run = await crawlgate(['sites', 'list', '--api', otherUrl], {
          XDG_CONFIG_HOME: join(home, 'elsewhere'),
          CRAWLGATE_API_URL: app.baseUrl,
          CRAWLGATE_API_KEY: key,
        });
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/Not logged in to http:\/\/127\.0\.0\.1:\d+/);
        expect(seen).toEqual([]);
      } finally {
        other.close();
      }
    });

    it('CRAWLGATE_API_URL and CRAWLGATE_API_KEY work without a config file', async () => {
      const key = (await savedConfig()).apiKey;
      const run = await crawlgate(['sites', 'list', '--json'], {
        XDG_CONFIG_HOME: join(home, 'elsewhere'),
        CRAWLGATE_API_URL: app.baseUrl,
        CRAWLGATE_API_KEY: key,
      });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).items).toHaveLength(3);
    });

    it('no output held an API key (except login --show-key)', () => {
      expect(outputs.length).toBeGreaterThan(20);
      for (const output of outputs) {
        expect(output).not.toMatch(/xk_pub_/);
        for (const key of keys) expect(output).not.toContain(key);
      }
    });
  });
});
