import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, DEFAULT_MAX_CHARS, DEFAULT_USER_AGENT, readConfig, type Env } from './config';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const BASE: Env = { CRAWLGATE_WALLET_KEY: KEY, CRAWLGATE_MAX_PRICE_USD: '0.01', CRAWLGATE_BUDGET_USD: '1.50' };

function problemsOf(env: Env): string[] {
  try {
    readConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('readConfig accepted it');
}

describe('readConfig', () => {
  it('reads the wallet and limits, with defaults for the rest', () => {
    const config = readConfig(BASE);
    expect(config.account.address).toBe(privateKeyToAccount(KEY).address);
    expect(config).toMatchObject({
      maxPriceUsd: '0.01',
      budgetUsd: '1.5',
      budgetFile: undefined,
      networks: ['base', 'base-sepolia'],
      payMode: 'authorization',
      rpcUrl: undefined,
      userAgent: DEFAULT_USER_AGENT,
      maxChars: DEFAULT_MAX_CHARS,
      allowPrivateNetworks: false,
    });
    expect(config.redact(`key ${KEY}`)).toBe('key [redacted]');
  });

  it('reads a cap on what one site takes, none by default (a prompt-injected page naming its own pages to fetch)', () => {
    expect(readConfig(BASE).maxSpendPerSiteUsd).toBeUndefined();
    expect(readConfig({ ...BASE, CRAWLGATE_MAX_SPEND_PER_SITE_USD: '0.050' }).maxSpendPerSiteUsd).toBe('0.05');
    expect(() => readConfig({ ...BASE, CRAWLGATE_MAX_SPEND_PER_SITE_USD: 'lots' })).toThrow(
      /CRAWLGATE_MAX_SPEND_PER_SITE_USD/,
    );
  });

  it('blanks the budget file’s path out of output: it names the user (the budget store’s errors quote it)', () => {
    const file = '/home/alice/.crawlgate-budget.json';
    const config = readConfig({ ...BASE, CRAWLGATE_BUDGET_FILE: file });
    expect(config.redact(`The budget file is locked by another process (${file}.lock); not paying`)).toBe(
      'The budget file is locked by another process (<CRAWLGATE_BUDGET_FILE>.lock); not paying',
    );
  });

  it('blanks the budget file’s real path (through a linked folder) and its JSON spelling (a backslash in it) too', () => {
    const home = mkdtempSync(join(tmpdir(), 'crawlgate-home-'));
    try {
      mkdirSync(join(home, 'alice-private'));
      symlinkSync(join(home, 'alice-private'), join(home, 'linked'));
      const file = join(home, 'linked', 'budget.json');
      const real = join(realpathSync(home), 'alice-private', 'budget.json');
      const config = readConfig({ ...BASE, CRAWLGATE_BUDGET_FILE: file });
      expect(config.redact(`${real} is not a Crawlgate budget file`)).toBe(
        '<CRAWLGATE_BUDGET_FILE> is not a Crawlgate budget file',
      );
      const windowsLike = join(home, 'C:\\Users\\alice', 'budget.json');
      const quoted = readConfig({ ...BASE, CRAWLGATE_BUDGET_FILE: windowsLike });
      expect(quoted.redact(JSON.stringify({ detail: `${windowsLike} is locked` }))).toBe(
        JSON.stringify({ detail: '<CRAWLGATE_BUDGET_FILE> is locked' }),
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('blanks the RPC URL out of output too, as written and as viem prints it: a hosted node’s URL holds its key', () => {
    const withKey = readConfig({
      ...BASE,
      CRAWLGATE_RPC_URL: 'https://user:pw@node.example/v2/SECRETAPIKEY?token=T0KEN',
    });
    const viemSays = 'HTTP request failed.\n\nURL: https://node.example/v2/SECRETAPIKEY?token=T0KEN\nRequest body: {}';
    for (const text of [viemSays, 'at https://user:pw@node.example/v2/SECRETAPIKEY?token=T0KEN', `key ${KEY}`]) {
      const clean = withKey.redact(text);
      expect(clean).not.toMatch(/SECRETAPIKEY|T0KEN|pw@|59c6995e/i);
      expect(clean).toContain('[redacted]');
    }
    // Credentials alone, as undici quotes the URL it refuses (normalised, credentials kept).
    const password = readConfig({ ...BASE, CRAWLGATE_RPC_URL: 'https://:SECRETPASSWORD@Node.example' });
    expect(password.redact('cannot be constructed: https://:SECRETPASSWORD@node.example/')).not.toContain('SECRET');
    // A short path is no secret: page text keeps it.
    const short = readConfig({ ...BASE, CRAWLGATE_RPC_URL: 'http://127.0.0.1:8545/rpc' });
    expect(short.redact('see https://example.org/rpc/guide and /rpc')).toBe(
      'see https://example.org/rpc/guide and /rpc',
    );
    expect(short.redact('URL: http://127.0.0.1:8545/rpc')).toBe('URL: [redacted]');
    // A node at its root: the whole URL is blanked all the same.
    const plain = readConfig({ ...BASE, CRAWLGATE_RPC_URL: 'https://node.example/' });
    expect(plain.redact('URL: https://node.example/')).toBe('URL: [redacted]');
  });

  it('names the CRAWLGATE_ variables that are none of its settings: a misspelt budget file is not silently per process', () => {
    const config = readConfig({
      ...BASE,
      CRAWLGATE_BUDGETFILE: '/tmp/b.json',
      crawlgate_budget_file: '/tmp/b.json',
      HOME: '/root',
    });
    expect(config.unknownSettings).toEqual(['CRAWLGATE_BUDGETFILE', 'crawlgate_budget_file']);
    expect(config.budgetFile).toBeUndefined();
    expect(readConfig(BASE).unknownSettings).toEqual([]);
  });

  it('takes an HTTP bearer token of 32 characters or more, and refuses a shorter one', () => {
    expect(readConfig(BASE).httpToken).toBeUndefined();
    expect(readConfig({ ...BASE, CRAWLGATE_HTTP_TOKEN: 'x'.repeat(32) }).httpToken).toBe('x'.repeat(32));
    expect(problemsOf({ ...BASE, CRAWLGATE_HTTP_TOKEN: 'x'.repeat(31) })).toEqual([
      'CRAWLGATE_HTTP_TOKEN must be at least 32 characters',
    ]);
  });

  it('takes a key without 0x or in upper case, and the optional settings', () => {
    const config = readConfig({
      ...BASE,
      CRAWLGATE_WALLET_KEY: ` ${KEY.slice(2).toUpperCase()} `,
      CRAWLGATE_NETWORKS: '[{"network":"local","asset":"0x5FbDB2315678afecb367f032d93F642f64180aa3"}]',
      CRAWLGATE_PAY_MODE: 'transfer',
      CRAWLGATE_RPC_URL: 'http://127.0.0.1:8545',
      CRAWLGATE_USER_AGENT: 'MyAssistantBot/2.0',
      CRAWLGATE_MAX_CHARS: '500',
      CRAWLGATE_BUDGET_FILE: '/var/lib/crawlgate/budget.json',
    });
    expect(config.account.address).toBe(privateKeyToAccount(KEY).address);
    expect(config).toMatchObject({
      networks: [{ network: 'local', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3' }],
      payMode: 'transfer',
      rpcUrl: 'http://127.0.0.1:8545',
      userAgent: 'MyAssistantBot/2.0',
      maxChars: 500,
      budgetFile: '/var/lib/crawlgate/budget.json',
    });
  });

  it('reads private networks only when told to: CRAWLGATE_ALLOW_PRIVATE_NETWORKS true or 1', () => {
    for (const text of ['true', 'TRUE', '1'])
      expect(readConfig({ ...BASE, CRAWLGATE_ALLOW_PRIVATE_NETWORKS: text }).allowPrivateNetworks).toBe(true);
    for (const text of ['false', '0', ''])
      expect(readConfig({ ...BASE, CRAWLGATE_ALLOW_PRIVATE_NETWORKS: text }).allowPrivateNetworks).toBe(false);
    expect(problemsOf({ ...BASE, CRAWLGATE_ALLOW_PRIVATE_NETWORKS: 'yes' })).toEqual([
      'CRAWLGATE_ALLOW_PRIVATE_NETWORKS must be "true" or "false"',
    ]);
  });

  it('takes a budget file only at an absolute path: a host picks the working directory', () => {
    expect(problemsOf({ ...BASE, CRAWLGATE_BUDGET_FILE: 'budget.json' })).toEqual([
      expect.stringMatching(/^CRAWLGATE_BUDGET_FILE must be an absolute path/),
    ]);
  });

  it('refuses to start without the wallet and both limits, naming each', () => {
    const problems = problemsOf({ CRAWLGATE_BUDGET_USD: ' ' });
    expect(problems).toEqual([
      expect.stringMatching(/^CRAWLGATE_WALLET_KEY is not set/),
      expect.stringMatching(/^CRAWLGATE_MAX_PRICE_USD is not set/),
      expect.stringMatching(/^CRAWLGATE_BUDGET_USD is not set/),
    ]);
    expect(() => readConfig({})).toThrow(/^crawlgate-mcp cannot start:\n {2}- CRAWLGATE_WALLET_KEY/);
  });

  it('never quotes a malformed key back', () => {
    for (const key of [
      `${KEY}0`,
      KEY.slice(0, -1),
      `${KEY.slice(0, -1)}g`,
      `0x${'0'.repeat(64)}`,
      `0x${'f'.repeat(64)}`,
    ]) {
      const problems = problemsOf({ ...BASE, CRAWLGATE_WALLET_KEY: key });
      expect(problems).toEqual([expect.stringMatching(/^CRAWLGATE_WALLET_KEY is not a/)]);
      expect(problems.join()).not.toContain(key.slice(2, 20));
    }
  });

  it.each<[Env, RegExp]>([
    [{ CRAWLGATE_MAX_PRICE_USD: '2' }, /^CRAWLGATE_MAX_PRICE_USD: /],
    [{ CRAWLGATE_MAX_PRICE_USD: 'ten cents' }, /^CRAWLGATE_MAX_PRICE_USD: /],
    [{ CRAWLGATE_BUDGET_USD: '-1' }, /^CRAWLGATE_BUDGET_USD: /],
    [{ CRAWLGATE_NETWORKS: '[{"network":"local"}]' }, /^CRAWLGATE_NETWORKS entry 0: /],
    [{ CRAWLGATE_PAY_MODE: 'cash' }, /^CRAWLGATE_PAY_MODE must be/],
    [{ CRAWLGATE_PAY_MODE: 'transfer' }, /^CRAWLGATE_RPC_URL is not set/],
    [{ CRAWLGATE_RPC_URL: 'ws://127.0.0.1:8545' }, /^CRAWLGATE_RPC_URL must be an http\(s\) URL/],
    [{ CRAWLGATE_MAX_CHARS: '0' }, /^CRAWLGATE_MAX_CHARS must be/],
    [{ CRAWLGATE_MAX_CHARS: '1e3' }, /^CRAWLGATE_MAX_CHARS must be/],
  ])('refuses %j', (override, problem) => {
    expect(problemsOf({ ...BASE, ...override })).toEqual([expect.stringMatching(problem)]);
  });
});
