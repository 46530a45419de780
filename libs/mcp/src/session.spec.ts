import { ConfigError, readConfig } from './config';
import { createWalletSession, describeSession } from './session';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const ENV = { CRAWLGATE_WALLET_KEY: KEY, CRAWLGATE_MAX_PRICE_USD: '0.01', CRAWLGATE_BUDGET_USD: '2' };

describe('createWalletSession', () => {
  it('holds the limits and the whole budget before anything is paid', async () => {
    const session = createWalletSession(readConfig(ENV));
    expect(session).toMatchObject({ maxPriceUsd: '0.01', budgetUsd: '2', networks: ['base', 'base-sepolia'] });
    expect(await session.remaining()).toEqual({ micros: 2_000_000n, usd: '2' });
    expect(session.ledger.pages(10)).toEqual({ pages: [], total: 0 });
    expect(describeSession(session)).toBe(
      `crawlgate-mcp: wallet ${session.address}, at most 0.01 USD a page, budget 2 USD, networks base, base-sepolia; a payment a site refuses stays reserved from the budget: with no CRAWLGATE_RPC_URL nothing can see its authorization expire unused (with a budget file, it counts as spent once this server stops); set CRAWLGATE_RPC_URL to the network’s node to free it`,
    );
    // With a node to ask, a refused payment's reservation ends once its authorization expired unused: no warning.
    const checked = createWalletSession(readConfig({ ...ENV, CRAWLGATE_RPC_URL: 'https://base.example.com/v2/key' }));
    expect(describeSession(checked)).toBe(
      `crawlgate-mcp: wallet ${checked.address}, at most 0.01 USD a page, budget 2 USD, networks base, base-sepolia`,
    );
  });

  it("turns the agent's refusal of a network into a configuration problem naming the variable", () => {
    const attempt = () => createWalletSession(readConfig({ ...ENV, CRAWLGATE_NETWORKS: 'local' }));
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/CRAWLGATE_NETWORKS: the USDC of "local" is deployed at run time/);
    expect(() => createWalletSession(readConfig({ ...ENV, CRAWLGATE_NETWORKS: 'base,mainnet' }))).toThrow(
      /CRAWLGATE_NETWORKS: unknown network "mainnet"/,
    );
  });

  it('blanks the key out of every line it logs', () => {
    const lines: string[] = [];
    const session = createWalletSession(readConfig(ENV), { log: (line) => lines.push(line) });
    session.log(`leaked ${KEY}`);
    expect(lines).toEqual(['leaked [redacted]']);
  });

  it('writes no character the operator’s terminal would act on (a URL the model typed, a site’s detail)', () => {
    const lines: string[] = [];
    const session = createWalletSession(readConfig(ENV), { log: (line) => lines.push(line) });
    session.log('fetch_page not a url\u001b]0;pwned\u0007\u001b[2J\u009b31m refused');
    expect(lines).toEqual(['fetch_page not a url\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m refused']);
  });
});
