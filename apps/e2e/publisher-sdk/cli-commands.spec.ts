/*
 * The commands that let a publisher do everything from the CLI alone (register, payout address,
 * key, secret and token rotation, site deletion, payments, policy, stdin, completion), each run
 * in-process against the real API on loopback.
 */

import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { payoutProofMessage, signAccessToken } from '@crawlgate/core';
import { DEV_ROLES } from '@crawlgate/devchain';
import { registerPublisher, type TestPublisher, type TestSite } from '../../../apps/api/test/fixtures';
import { startTestApp, type TestApp } from '../../../apps/api/test/test-app';
import { insertPayment, newAddress } from '../../../apps/api/src/reporting/test-payments';
import { cliRunner, fakeTerminal, newDomain, newEmail, PASSWORD, pipedStdin, type CliRun } from './support';

const PAYOUT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

describe('crawlgate CLI: a publisher with only the CLI', () => {
  let app: TestApp;
  let home: string;
  /** Every output but those asked to show a key (--show-key, or a rotation of CRAWLGATE_API_KEY). */
  const outputs: string[] = [];
  const keys = new Set<string>();
  const crawlgate = cliRunner(
    () => home,
    (args, run) =>
      void (args.includes('--show-key') || args.includes('api-key') || outputs.push(run.stdout + run.stderr)),
  );
  const withPassword = { CRAWLGATE_PASSWORD: PASSWORD };
  const email = newEmail();
  const domain = newDomain();
  let publisherId: string;
  let siteId: string;
  let siteToken: string;

  const configFile = () => join(home, 'crawlgate', 'config.json');
  const savedKey = async () => (JSON.parse(await readFile(configFile(), 'utf8')) as { apiKey: string }).apiKey;
  const json = (run: CliRun) => {
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(run.stdout);
  };
  /** Types a line into a fake terminal once the CLI is listening. */
  const typeLater = (stdin: ReturnType<typeof fakeTerminal>, ...lines: string[]) => {
    const [line, ...rest] = lines;
    setTimeout(() => {
      stdin.write(line);
      if (rest.length > 0) typeLater(stdin, ...rest);
    }, 20);
  };

  beforeAll(async () => {
    app = await startTestApp();
    home = await mkdtemp(join(tmpdir(), 'crawlgate-cli-'));
  }, 60_000);
  afterAll(async () => {
    await app.close();
    await rm(home, { recursive: true, force: true });
  }, 60_000);

  describe('register', () => {
    it('off a terminal without a password it fails before calling the API', async () => {
      const run = await crawlgate(['register', '--api', app.baseUrl, '--email', email]);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/No password: pass --password, set CRAWLGATE_PASSWORD/);
    });

    it('on a terminal it asks twice; two different answers send nothing', async () => {
      const stdin = fakeTerminal();
      typeLater(stdin, `${PASSWORD}\r`, 'something else\r');
      const run = await crawlgate(['register', '--api', app.baseUrl, '--email', email], {}, stdin);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: 'Password: \nRepeat the password: \nerror: The two passwords differ; nothing was sent\n',
      });
      await expect(stat(configFile())).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('a short password is the API 422, naming the field', async () => {
      const run = await crawlgate(['register', '--api', app.baseUrl, '--email', email, '--password', 'short']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: the API rejected the request \(HTTP 422\):\n {2}body\.password: /);
    });

    it('creates the account and saves the key (0600) without printing it', async () => {
      const stdin = fakeTerminal();
      typeLater(stdin, `${PASSWORD}\r`, `${PASSWORD}\r`);
      const run = await crawlgate(
        ['register', '--api', `${app.baseUrl}/`, '--email', email, '--name', 'Example News'],
        {},
        stdin,
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('Password: \nRepeat the password: \n');
      expect(run.stdout).toMatch(
        new RegExp(
          `^Registered ${email} at ${app.baseUrl}\\. No payout address yet: set one with \`crawlgate payout set <address>\`\\.\n`,
        ),
      );
      expect(run.stdout).toMatch(
        /\nPublisher +[0-9a-f-]{36}\nEmail +\S+\nName +Example News\nConfig +.*config\.json \(mode 0600\)\n$/,
      );
      keys.add(await savedKey());
      expect(await savedKey()).toMatch(/^xk_pub_/);
      expect((await stat(configFile())).mode & 0o777).toBe(0o600);
    });

    it('the same email again is the 409 detail', async () => {
      const run = await crawlgate(['register', '--api', app.baseUrl, '--email', email], withPassword);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: .+ \(HTTP 409\)\n$/);
    });
  });

  describe('me and the payout address', () => {
    it('me shows the account; --json is the API answer', async () => {
      const me = json(await crawlgate(['me', '--json']));
      expect(me).toEqual({
        publisher_id: expect.any(String),
        email,
        name: 'Example News',
        payout_address: null,
        payout_address_proven: false,
        created_at: expect.any(String),
      });
      publisherId = me.publisher_id;
      const run = await crawlgate(['me']);
      expect(run.stdout).toBe(
        [
          `Publisher       ${publisherId}`,
          `Email           ${email}`,
          'Name            Example News',
          'Payout address  none (bots cannot pay your priced sites until you run `crawlgate payout set <address>`)',
          `Created         ${me.created_at}`,
          '',
        ].join('\n'),
      );
    });

    it('payout set needs the password: none off a terminal, a wrong one is the 401 detail', async () => {
      const none = await crawlgate(['payout', 'set', PAYOUT]);
      expect(none).toMatchObject({ code: 1, stderr: expect.stringMatching(/No password/) });
      const wrong = await crawlgate(['payout', 'set', PAYOUT, '--password', 'not the password']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/^error: X-Confirm-Password does not match \(HTTP 401\)/);
      expect(json(await crawlgate(['me', '--json'])).payout_address).toBeNull();
    });

    it('payout set with a bad address is the 422 item', async () => {
      const run = await crawlgate(['payout', 'set', '0x1234'], withPassword);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/\n {2}body\.payout_address: /);
    });

    it('payout set asks for the password on a terminal and stores the address checksummed', async () => {
      const stdin = fakeTerminal();
      typeLater(stdin, `${PASSWORD}\r`);
      const run = await crawlgate(['payout', 'set', PAYOUT.toLowerCase()], {}, stdin);
      expect(run).toEqual({ code: 0, stdout: `Payout address set: ${PAYOUT}\n`, stderr: 'Password: \n' });
      expect(json(await crawlgate(['me', '--json'])).payout_address).toBe(PAYOUT);
    });

    it('payout clear removes it (password from CRAWLGATE_PASSWORD); set puts it back (--json)', async () => {
      const cleared = await crawlgate(['payout', 'clear'], withPassword);
      expect(cleared).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Payout address removed: none/) });
      expect(json(await crawlgate(['me', '--json'])).payout_address).toBeNull();
      expect(json(await crawlgate(['payout', 'set', PAYOUT, '--json'], withPassword))).toMatchObject({
        payout_address: PAYOUT,
      });
    });

    it('payout set of an address another publisher names prints the text to sign; --proof with its signature takes it', async () => {
      const other = await registerPublisher(app);
      const asOther = {
        CRAWLGATE_API_URL: app.baseUrl,
        CRAWLGATE_API_KEY: other.apiKey,
        CRAWLGATE_PASSWORD: other.password,
      };
      const message = payoutProofMessage(PAYOUT, other.publisherId);
      const refused = await crawlgate(['payout', 'set', PAYOUT], asOther);
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toContain(`\n\n  ${message}\n\n`);
      expect(refused.stderr).toContain(`\n  cast wallet sign --interactive '${message}'\n`);
      expect(refused.stderr).not.toContain('--private-key');
      expect(refused.stderr).toContain(`crawlgate payout set ${PAYOUT} --proof <signature>`);
      const byStranger = await crawlgate(
        ['payout', 'set', PAYOUT, '--proof', await DEV_ROLES.spare[0].account.signMessage({ message })],
        asOther,
      );
      expect(byStranger.code).toBe(1);
      expect(byStranger.stderr).toMatch(/^error: payout_proof is not a signature by /);

      const proof = await DEV_ROLES.publisher.account.signMessage({ message });
      expect(json(await crawlgate(['payout', 'set', PAYOUT, '--proof', proof, '--json'], asOther))).toMatchObject({
        payout_address: PAYOUT,
        payout_address_proven: true,
      });
      expect((await crawlgate(['me'], asOther)).stdout).toContain(
        `Payout address  ${PAYOUT} (proven: it signed for this account)`,
      );
      // This CLI's publisher named it without a proof: the proof took it; its own proof gives it back.
      expect(json(await crawlgate(['me', '--json'])).payout_address).toBeNull();
      const own = await DEV_ROLES.publisher.account.signMessage({ message: payoutProofMessage(PAYOUT, publisherId) });
      expect(json(await crawlgate(['payout', 'set', PAYOUT, '--proof', own, '--json'], withPassword))).toMatchObject({
        payout_address: PAYOUT,
        payout_address_proven: true,
      });
    });
  });

  describe('sites by id or domain', () => {
    it('sites create, then commands take the domain in place of the id', async () => {
      const site = json(await crawlgate(['sites', 'create', domain, '--json']));
      siteId = site.site_id;
      siteToken = site.site_token;
      expect(json(await crawlgate(['pricing', 'show', domain.toUpperCase(), '--json'])).site_id).toBe(siteId);
      expect(json(await crawlgate(['pricing', 'show', siteId, '--json'])).site_id).toBe(siteId);
    });

    it('a domain that is not one of yours is the API 404', async () => {
      const run = await crawlgate(['pricing', 'show', 'elsewhere.example.org']);
      expect(run).toEqual({ code: 1, stdout: '', stderr: 'error: Site not found (HTTP 404)\n' });
    });
  });

  describe('sites rotate-secret', () => {
    /** What POST /v1/access-tokens/verify says of a token signed with `secret` under `kid`. */
    async function verifies(secret: string, kid: string): Promise<boolean> {
      const now = Math.floor(Date.now() / 1000);
      const token = signAccessToken({ gate_id: 'g', site_id: siteId, url: '/a', kid, iat: now, exp: now + 60 }, secret);
      const answer = await app.call('POST', '/v1/access-tokens/verify', {
        body: { token },
        headers: { 'x-site-token': siteToken },
      });
      return answer.body.valid === true;
    }

    it('prints the new secret once; the previous one verifies during the default grace', async () => {
      const run = await crawlgate(['sites', 'rotate-secret', domain]);
      expect(run.code).toBe(0);
      const [, secret] = run.stdout.match(/access-token secret +(cgsec_\S+)\n/)!;
      const [, kid] = run.stdout.match(/key id +(\S+)\n/)!;
      expect(run.stdout).toMatch(new RegExp(`^New access-token secret for ${siteId}, shown only now`));
      const [, until] = run.stdout.match(/verifies until (\S+)\.\n$/)!;
      expect(Date.parse(until) - Date.now()).toBeGreaterThan(3500_000);
      expect(await verifies(secret, kid)).toBe(true);
    });

    it('--grace-seconds 0 revokes the previous secret at once', async () => {
      const first = json(await crawlgate(['sites', 'rotate-secret', siteId, '--json']));
      const run = await crawlgate(['sites', 'rotate-secret', siteId, '--grace-seconds', '0']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/\nThe previous secret no longer verifies\.\n$/);
      expect(await verifies(first.access_token_secret, first.kid)).toBe(false);
    });

    it('a grace that is not a whole number is a usage error; one over the API limit is its 422', async () => {
      expect(await crawlgate(['sites', 'rotate-secret', siteId, '--grace-seconds', '1.5'])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--grace-seconds takes a whole number/),
      });
      const tooLong = await crawlgate(['sites', 'rotate-secret', siteId, '--grace-seconds', '999999']);
      expect(tooLong.code).toBe(1);
      expect(tooLong.stderr).toMatch(/body\.grace_seconds: grace_seconds must not be greater than 3600/);
    });
  });

  describe('policy and pricing from the command line and stdin', () => {
    it('policy show: default, rules, payout address, and the rule that wins for --path', async () => {
      const run = await crawlgate(['policy', 'show', domain, '--path', '/articles/1']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(`^Site +${siteId} \\(${domain.replace(/\./g, '\\.')}\\)\nDefault USD +0\n`),
      );
      expect(run.stdout).toContain(`Payout address  ${PAYOUT}\n`);
      expect(run.stdout).toContain('No rules: every path costs the default.\n');
      expect(run.stdout).toContain('\nPath /articles/1: 0 USD (the default)\n');
      expect(run.stdout).toMatch(
        /\nBot policy, version 0, updated never:\n\nCategory +Action\nai-training +charge \(default\)\n/,
      );
      expect(run.stdout).toMatch(/\nseo +charge \(default\)\n/);
      expect(run.stdout).toContain('No crawler has an action of its own');
    });

    it('policy set --default and --rule, in order; --default alone keeps the rules', async () => {
      const set = await crawlgate([
        'policy',
        'set',
        domain,
        '--default',
        '0.002',
        '--rule',
        '/articles/*=0.01',
        '--rule',
        '/a=b/*=0',
      ]);
      expect(set).toEqual({ code: 0, stdout: `Policy of ${domain} set: default 0.002 USD, 2 rules.\n`, stderr: '' });
      expect(json(await crawlgate(['policy', 'set', siteId, '--default', '0.003', '--json']))).toEqual({
        rules_applied: 2,
      });
      const policy = json(await crawlgate(['policy', 'show', domain, '--path', '/articles/9?x=1', '--json']));
      expect(policy).toEqual({
        site_id: siteId,
        domain,
        default_price_usd: '0.003',
        rules: [
          { path: '/articles/*', price_usd: '0.01' },
          { path: '/a=b/*', price_usd: '0' },
        ],
        version: expect.any(Number),
        updated_at: expect.any(String),
        payout_address: PAYOUT,
        bot_policy: {
          categories: {},
          bots: {},
          require_signature: { categories: [], bots: [] },
          defaults: expect.objectContaining({ seo: 'charge', 'search-engine': 'allow' }),
          version: 0,
          updated_at: null,
        },
        resolved: { path: '/articles/9', price_usd: '0.01', rule: 0, pattern: '/articles/*' },
      });
      const table = (await crawlgate(['policy', 'show', domain])).stdout;
      expect(table).toMatch(/\n# {2}PATH +USD\n0 {2}\/articles\/\* +0\.01\n1 {2}\/a=b\/\* +0\n\nBot policy/);
    });

    it('policy set --clear-rules keeps the default; a bad price is the 422 and changes nothing', async () => {
      const bad = await crawlgate(['policy', 'set', domain, '--rule', '/x=2']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/body\.rules\.0\.price_usd: /);
      expect(json(await crawlgate(['pricing', 'show', domain, '--json'])).rules).toHaveLength(2);
      expect((await crawlgate(['policy', 'set', domain, '--clear-rules'])).stdout).toBe(
        `Policy of ${domain} set: default 0.003 USD, 0 rules.\n`,
      );
    });

    it.each([
      [['policy', 'set', 'x.example.com'], /Nothing to set/],
      [['policy', 'set', 'x.example.com', '--rule', '/articles/*'], /--rule takes <glob>=<usd>/],
      [['policy', 'set', 'x.example.com', '--rule', '/a=1', '--clear-rules'], /contradict/],
      [['policy', 'set', 'x.example.com', '--file', 'p.yaml', '--default', '0'], /--file replaces the whole pricing/],
    ])('%j is a usage error', async (args, message) => {
      expect(await crawlgate(args)).toMatchObject({ code: 2, stderr: expect.stringMatching(message) });
    });

    it('bots set and bots reset change one crawler, which policy show prints', async () => {
      const set = await crawlgate(['bots', 'set', domain, 'gptbot', 'block']);
      expect(set).toMatchObject({
        code: 0,
        stderr: '',
        stdout: expect.stringMatching(
          new RegExp(
            `^GPTBot on ${domain.replace(/\./g, '\\.')}: block; the middleware applies it on its next refresh`,
          ),
        ),
      });
      const allowed = await crawlgate(['bots', 'set', siteId, 'screaming frog seo spider', 'allow', '--json']);
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({
        bots: { GPTBot: 'block', 'Screaming Frog SEO Spider': 'allow' },
        version: 2,
      });
      // Nothing verifies Screaming Frog SEO Spider (no published ranges or host names, no signature): allowing it is a warning on stderr.
      expect(allowed.stderr).toBe(
        'Warning: Allowed on its name alone: the gate cannot verify Screaming Frog SEO Spider, so anyone who sends that User-Agent gets your pages free.\n',
      );
      const shown = (await crawlgate(['policy', 'show', domain])).stdout;
      expect(shown).toMatch(/\nCrawler +Action\nGPTBot +block\nScreaming Frog SEO Spider +allow\n$/);
      expect(json(await crawlgate(['policy', 'show', domain, '--json'])).bot_policy).toMatchObject({
        bots: { GPTBot: 'block', 'Screaming Frog SEO Spider': 'allow' },
        version: 2,
      });

      const reset = await crawlgate(['bots', 'reset', domain, 'GPTBot']);
      expect(reset).toMatchObject({
        code: 0,
        stderr: '',
        stdout: expect.stringMatching(
          /^GPTBot on .*: no action of its own; its category's action applies \(ai-training charge, /,
        ),
      });
      expect(json(await crawlgate(['bots', 'reset', domain, 'Screaming Frog SEO Spider', '--json']))).toMatchObject({
        bots: {},
        version: 4,
      });
    });

    it('bots set: an unknown crawler is the API’s 422, an unknown action a usage error, and nothing changes', async () => {
      const unknown = await crawlgate(['bots', 'set', domain, 'GPT-Bot', 'block']);
      expect(unknown).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/path\.name: "GPT-Bot" is no bot of the catalogue/),
      });
      expect(await crawlgate(['bots', 'set', domain, 'GPTBot', 'deny'])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/The action is one of allow, charge, block; got "deny"/),
      });
      expect(await crawlgate(['bots', 'set', domain, 'GPTBot'])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/Expected <site> <name> <action>/),
      });
      expect(json(await crawlgate(['policy', 'show', domain, '--json'])).bot_policy).toMatchObject({
        bots: {},
        version: 4,
      });
      // Allowing a group lets in whatever it holds: a warning too.
      const group = await crawlgate(['bots', 'set', domain, 'unknown-crawler', 'allow']);
      expect(group.stderr).toBe('Warning: Allowed: every crawler the gate cannot name gets your pages free.\n');
      expect((await crawlgate(['bots', 'reset', domain, 'unknown-crawler'])).code).toBe(0);
    });

    it('pricing set --file - reads YAML from stdin; policy set --file - reads JSON', async () => {
      const yaml = 'default_price_usd: "0.004"\nrules:\n  - path: /free/*\n    price_usd: "0"\n';
      const run = await crawlgate(['pricing', 'set', domain, '--file', '-'], {}, pipedStdin(yaml));
      expect(run).toEqual({ code: 0, stdout: `Pricing of ${domain} replaced: 1 rule applied.\n`, stderr: '' });
      expect(json(await crawlgate(['pricing', 'show', domain, '--json'])).default_price_usd).toBe('0.004');

      const body = JSON.stringify({ default_price_usd: 0.005, rules: [] });
      expect(json(await crawlgate(['policy', 'set', domain, '-f', '-', '--json'], {}, pipedStdin(body)))).toEqual({
        rules_applied: 0,
      });
      expect(json(await crawlgate(['pricing', 'show', domain, '--json']))).toMatchObject({
        default_price_usd: '0.005',
        rules: [],
      });
    });

    it('--file - with bad or empty input names standard input', async () => {
      const broken = await crawlgate(['pricing', 'set', domain, '--file', '-'], {}, pipedStdin('rules: [1]\n'));
      expect(broken).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: standard input: line 1: /) });
      const empty = await crawlgate(['pricing', 'set', domain, '--file', '-'], {}, pipedStdin(''));
      expect(empty).toMatchObject({
        code: 1,
        stderr:
          'error: standard input must hold an object: default_price_usd and an optional list of rules ({path, price_usd})\n',
      });
    });
  });

  describe('payments', () => {
    it('a site without payments says so', async () => {
      expect(await crawlgate(['payments', domain])).toEqual({ code: 0, stdout: 'No payments yet.\n', stderr: '' });
    });

    it('pages newest first with --limit, the next page by --cursor; --all follows every page', async () => {
      const payer = newAddress();
      const owner = { publisherId } as TestPublisher;
      const site = { siteId } as TestSite;
      for (let i = 0; i < 5; i++) {
        await insertPayment(app, owner, site, {
          payer,
          amount: 5_000n,
          url: `/articles/${i}`,
          confirmedAt: new Date(Date.UTC(2026, 0, 1 + i)),
        });
      }
      const first = await crawlgate(['payments', domain, '--limit', '2']);
      expect(first.code).toBe(0);
      const lines = first.stdout.split('\n');
      expect(lines[0]).toMatch(/^PAID AT +PATH +USD +PAYER +NETWORK +TX$/);
      expect(lines[1]).toMatch(
        new RegExp(`^2026-01-05T00:00:00\\.000Z +/articles/4 +0\\.005 +${payer} +\\S+ +0x[0-9a-f]{64}$`),
      );
      expect(lines[2]).toMatch(/^2026-01-04T\S+ +\/articles\/3 /);
      const [, cursor] = first.stdout.match(
        new RegExp(`\nMore: crawlgate payments ${domain.replace(/\./g, '\\.')} --cursor (\\S+) --limit 2\n$`),
      )!;

      const second = json(await crawlgate(['payments', siteId, '--limit', '2', '--cursor', cursor, '--json']));
      expect(second.items.map((p: { url: string }) => p.url)).toEqual(['/articles/2', '/articles/1']);
      expect(second.next_cursor).toEqual(expect.any(String));

      const all = json(await crawlgate(['payments', domain, '--all', '--limit', '2', '--json']));
      expect(all.next_cursor).toBeNull();
      expect(all.items.map((p: { url: string }) => p.url)).toEqual([
        '/articles/4',
        '/articles/3',
        '/articles/2',
        '/articles/1',
        '/articles/0',
      ]);
      expect(all.items[0]).toMatchObject({ site_id: siteId, payer, amount: '5000', price_usd: '0.005' });
    });

    it('bad filters: a malformed --limit is a usage error, an out-of-range one or a forged cursor the API 422', async () => {
      expect(await crawlgate(['payments', domain, '--limit', 'ten'])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--limit takes a whole number/),
      });
      expect(await crawlgate(['payments', domain, '--all', '--cursor', 'x'])).toMatchObject({ code: 2 });
      const zero = await crawlgate(['payments', domain, '--limit', '0', '--json']);
      expect(zero.code).toBe(1);
      expect(JSON.parse(zero.stderr)).toMatchObject({ status: 422, detail: [{ loc: ['query', 'limit'] }] });
      expect((await crawlgate(['payments', domain, '--cursor', 'forged'])).stderr).toMatch(/query\.cursor: /);
    });
  });

  describe('sites delete', () => {
    it('off a terminal it needs --yes', async () => {
      const run = await crawlgate(['sites', 'delete', domain]);
      expect(run).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot be undone: pass --yes/) });
      expect(json(await crawlgate(['sites', 'list', '--json'])).items).toHaveLength(1);
    });

    it('on a terminal a mistyped domain deletes nothing', async () => {
      const stdin = fakeTerminal();
      typeLater(stdin, 'other.example.com\n');
      const run = await crawlgate(['sites', 'delete', siteId], {}, stdin);
      expect(run).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(
          /Type the domain to confirm: error: Not deleted: the domain typed did not match\n$/,
        ),
      });
      expect(json(await crawlgate(['sites', 'list', '--json'])).items).toHaveLength(1);
    });

    it('on a terminal whose input ends unanswered (Ctrl-D) it deletes nothing and fails', async () => {
      // The prompt never settled: Node's event loop emptied and the CLI exited 0, deleting nothing.
      const stdin = fakeTerminal();
      setTimeout(() => stdin.end(), 20);
      const run = await Promise.race([
        crawlgate(['sites', 'delete', siteId], {}, stdin),
        new Promise<'no end'>((resolve) => setTimeout(() => resolve('no end'), 5_000)),
      ]);
      expect(run).toMatchObject({ code: 1, stderr: expect.stringMatching(/error: Not deleted: no answer\n$/) });
      expect(json(await crawlgate(['sites', 'list', '--json'])).items).toHaveLength(1);
    });

    it('on a terminal the typed domain confirms; its token stops working and its payments are kept', async () => {
      const stdin = fakeTerminal();
      typeLater(stdin, `${domain}\n`);
      const run = await crawlgate(['sites', 'delete', domain], {}, stdin);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        `Deleted site ${siteId}. Its site token and access-token secret no longer work; its payments are kept.\n`,
      );
      expect(json(await crawlgate(['sites', 'list', '--json'])).items).toEqual([]);
      expect((await app.call('GET', '/v1/site', { headers: { 'x-site-token': siteToken } })).status).toBe(401);
      expect(await app.database.prisma.payment.count({ where: { siteId } })).toBe(5);
    });

    it('--yes deletes without asking (--json); an unknown site is the 404', async () => {
      const other = json(await crawlgate(['sites', 'create', newDomain(), '--json']));
      expect(json(await crawlgate(['sites', 'delete', other.domain, '--yes', '--json']))).toEqual({
        site_id: other.site_id,
        deleted: true,
      });
      expect(await crawlgate(['sites', 'delete', other.site_id, '-y'])).toMatchObject({
        code: 1,
        stderr: 'error: Site not found (HTTP 404)\n',
      });
    });
  });

  describe('api-key rotate', () => {
    it('replaces the saved key, which is not printed; the previous key is refused', async () => {
      const before = await savedKey();
      const run = await crawlgate(['api-key', 'rotate']);
      outputs.push(run.stdout + run.stderr);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^New API key saved; the previous one no longer works\.\nPublisher +[0-9a-f-]{36}\nConfig +.*\(mode 0600\)\n$/,
      );
      const after = await savedKey();
      keys.add(after);
      expect(after).not.toBe(before);
      expect(
        (await app.call('GET', '/v1/publishers/me', { headers: { authorization: `Bearer ${before}` } })).status,
      ).toBe(401);
      expect(json(await crawlgate(['me', '--json'])).email).toBe(email);
    });

    it('--show-key prints the new saved key', async () => {
      const printed = json(await crawlgate(['api-key', 'rotate', '--show-key', '--json']));
      expect(printed.api_key).toBe(await savedKey());
      keys.add(printed.api_key);
    });

    it('a key from CRAWLGATE_API_KEY is rotated and the new one printed; the config file is left alone', async () => {
      const saved = await savedKey();
      const env = { XDG_CONFIG_HOME: join(home, 'none'), CRAWLGATE_API_URL: app.baseUrl, CRAWLGATE_API_KEY: saved };
      const run = await crawlgate(['api-key', 'rotate'], env);
      expect(run.code).toBe(0);
      const [, key] = run.stdout.match(
        /^New API key \(the previous one, from CRAWLGATE_API_KEY, no longer works; shown only now\):\n {2}(xk_pub_\S+)\n$/,
      )!;
      await expect(stat(join(home, 'none'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(json(await crawlgate(['me', '--json'], { ...env, CRAWLGATE_API_KEY: key })).email).toBe(email);
      expect((await crawlgate(['me'])).stderr).toMatch(/HTTP 401/);
    });
  });

  describe('completion', () => {
    /** What bash offers after `line` (a trailing space starts a new word), with the script loaded. */
    function bashCompletes(script: string, line: string): string[] {
      const probe = `${script}\nCOMP_WORDS=(${line}); [[ "${line}" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _crawlgate; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return execFileSync('bash', ['-c', probe], { encoding: 'utf8' }).split('\n').filter(Boolean);
    }

    it('bash: commands, a group’s commands, options and the shells', async () => {
      const run = await crawlgate(['completion', 'bash']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(bashCompletes(run.stdout, 'crawlgate ')).toEqual([
        'register',
        'login',
        'me',
        'payout',
        'api-key',
        'sites',
        'pricing',
        'policy',
        'bots',
        'payments',
        'stats',
        'completion',
      ]);
      expect(bashCompletes(run.stdout, 'crawlgate sites ')).toEqual([
        'create',
        'list',
        'delete',
        'rotate-token',
        'rotate-secret',
      ]);
      expect(bashCompletes(run.stdout, 'crawlgate sites rotate-secret x.example.com --g')).toEqual(['--grace-seconds']);
      expect(bashCompletes(run.stdout, 'crawlgate policy set x --')).toEqual([
        '--default',
        '--rule',
        '--clear-rules',
        '--file',
        '--api',
        '--json',
        '--help',
      ]);
      expect(bashCompletes(run.stdout, 'crawlgate completion ')).toEqual(['bash', 'zsh', 'fish']);
      expect(bashCompletes(run.stdout, 'crawlgate pricing set x --file ')).toEqual([]);
      expect(run.stdout).toMatch(/\ncomplete -o default -F _crawlgate crawlgate\n$/);
    });

    it('zsh loads the bash function through bashcompinit; fish gets complete lines', async () => {
      const bash = (await crawlgate(['completion', 'bash'])).stdout;
      const zsh = await crawlgate(['completion', 'zsh']);
      expect(zsh.code).toBe(0);
      expect(zsh.stdout).toContain('autoload -U +X bashcompinit && bashcompinit\n');
      expect(zsh.stdout.endsWith(bash)).toBe(true);
      const fish = await crawlgate(['completion', 'fish']);
      expect(fish.code).toBe(0);
      expect(fish.stdout).toContain(
        "complete -c crawlgate -f -n __fish_use_subcommand -a sites -d 'create, list, delete, rotate-token, rotate-secret'\n",
      );
      expect(fish.stdout).toContain(
        "complete -c crawlgate -n '__fish_seen_subcommand_from sites; and __fish_seen_subcommand_from rotate-secret' -l grace-seconds -r\n",
      );
      expect(fish.stdout).toContain(
        "complete -c crawlgate -f -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n",
      );
    });

    it('another shell is a usage error', async () => {
      expect(await crawlgate(['completion', 'tcsh'])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/Unknown shell "tcsh": bash, zsh or fish/),
      });
    });
  });

  it('no output held an API key, except where one was asked for', () => {
    expect(outputs.length).toBeGreaterThan(40);
    for (const output of outputs) {
      expect(output).not.toMatch(/xk_pub_/);
      for (const key of keys) expect(output).not.toContain(key);
    }
  });
});
