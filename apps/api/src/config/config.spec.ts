import { ACCESS_TOKEN_TTL_SECONDS, MIN_ACCESS_TOKEN_TTL_SECONDS } from '@crawlgate/core';
import { ConfigError, loadConfig, loggableUrl } from './config';

describe('loadConfig', () => {
  const testnet = {
    CRAWLGATE_NETWORK: 'base-sepolia',
    RPC_URL: 'https://sepolia.base.org',
    RELAYER_PRIVATE_KEY: `0x${'1'.repeat(64)}`,
  };

  describe('PUBLIC_BASE_URL', () => {
    it('is required off the local network: verify_url must not come from a request’s Host header', () => {
      for (const network of ['base-sepolia', 'base']) {
        expect(() => loadConfig({ ...testnet, CRAWLGATE_NETWORK: network })).toThrow(ConfigError);
        expect(() => loadConfig({ ...testnet, CRAWLGATE_NETWORK: network, PUBLIC_BASE_URL: ' ' })).toThrow(
          /PUBLIC_BASE_URL is required on/,
        );
      }
    });

    it('is taken off the local network, without a trailing slash', () => {
      expect(loadConfig({ ...testnet, PUBLIC_BASE_URL: 'https://api.crawlgate.example/' }).publicBaseUrl).toBe(
        'https://api.crawlgate.example',
      );
    });

    it('may be left unset on local, where verify_url takes the request’s base', () => {
      expect(loadConfig({}).publicBaseUrl).toBeUndefined();
      expect(loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000' }).publicBaseUrl).toBe('http://localhost:3000');
    });

    it('must be an http(s) URL with no query or fragment', () => {
      for (const bad of [
        'api.crawlgate.example',
        'ftp://api.crawlgate.example',
        'https://api.crawlgate.example/?x=1',
        'https://api.crawlgate.example/#top',
      ]) {
        expect(() => loadConfig({ ...testnet, PUBLIC_BASE_URL: bad })).toThrow(/PUBLIC_BASE_URL must be/);
      }
    });
  });

  it('refuses a claimer interval longer than a quarter of the withdraw delay: a payer would withdraw what no claim collected', () => {
    expect(() => loadConfig({ BATCH_WITHDRAW_DELAY_SECONDS: '900', CLAIM_INTERVAL_MS: '3600000' })).toThrow(
      /CLAIM_INTERVAL_MS \(3600000\) must be at most a quarter of BATCH_WITHDRAW_DELAY_SECONDS \(900 s\)/,
    );
    expect(
      loadConfig({ BATCH_WITHDRAW_DELAY_SECONDS: '900', CLAIM_INTERVAL_MS: '225000' }).chain.batchSettlement,
    ).toMatchObject({
      claimIntervalMs: 225_000,
      withdrawDelaySeconds: 900,
    });
    // 0: this instance claims nothing (another does).
    expect(loadConfig({ CLAIM_INTERVAL_MS: '0' }).chain.batchSettlement.claimIntervalMs).toBe(0);
  });

  describe('RELAYER_URGENT_MAX_FEE_PER_GAS_WEI', () => {
    it('is ten times RELAYER_MAX_FEE_PER_GAS_WEI unless set', () => {
      expect(loadConfig({}).chain.feeBump).toMatchObject({
        maxFeePerGas: 10_000_000_000n,
        urgentMaxFeePerGas: 100_000_000_000n,
      });
      expect(loadConfig({ RELAYER_MAX_FEE_PER_GAS_WEI: '2000000000' }).chain.feeBump.urgentMaxFeePerGas).toBe(
        20_000_000_000n,
      );
      expect(loadConfig({ RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: '50000000000' }).chain.feeBump.urgentMaxFeePerGas).toBe(
        50_000_000_000n,
      );
      // Equal to the normal maximum: urgent claims get no more room than any transaction.
      expect(loadConfig({ RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: '10000000000' }).chain.feeBump.urgentMaxFeePerGas).toBe(
        10_000_000_000n,
      );
    });

    it('refuses less than RELAYER_MAX_FEE_PER_GAS_WEI: an urgent claim must never be held by less than any other transaction', () => {
      expect(() => loadConfig({ RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: '9999999999' })).toThrow(
        /RELAYER_URGENT_MAX_FEE_PER_GAS_WEI \(9999999999\) must be at least RELAYER_MAX_FEE_PER_GAS_WEI \(10000000000\)/,
      );
      expect(() =>
        loadConfig({ RELAYER_MAX_FEE_PER_GAS_WEI: '200000000000', RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: '100000000000' }),
      ).toThrow(ConfigError);
    });

    it('refuses anything but a whole number of wei', () => {
      for (const bad of ['-1', '0', '1.5', '1e11', '100 gwei', '0x174876e800'])
        expect(() => loadConfig({ RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: bad })).toThrow(
          new RegExp(
            `RELAYER_URGENT_MAX_FEE_PER_GAS_WEI must be an integer from 1 to \\d+, got "${bad.replace('.', '\\.')}"`,
          ),
        );
    });
  });

  it('issues access tokens for a minute at the least: an agent takes a payment as bought for at least that long', () => {
    expect(loadConfig({}).accessTokenTtlSeconds).toBe(ACCESS_TOKEN_TTL_SECONDS);
    expect(loadConfig({ ACCESS_TOKEN_TTL_SECONDS: '60' }).accessTokenTtlSeconds).toBe(MIN_ACCESS_TOKEN_TTL_SECONDS);
    expect(() => loadConfig({ ACCESS_TOKEN_TTL_SECONDS: '59' })).toThrow(
      'ACCESS_TOKEN_TTL_SECONDS must be an integer from 60 to 604800, got "59"',
    );
  });

  it('hashes passwords with scrypt at 2^15, whatever the environment says', () => {
    expect(loadConfig({}).passwordScryptLogN).toBe(15);
    expect(loadConfig({ PASSWORD_SCRYPT_LOG_N: '10' }).passwordScryptLogN).toBe(15);
  });

  it('still names RPC_URL first when it is missing too', () => {
    expect(() => loadConfig({ CRAWLGATE_NETWORK: 'base' })).toThrow(/RPC_URL is required on base/);
  });

  describe('TRUST_PROXY', () => {
    it('is a count of proxies in front; true is one and false none; off by default', () => {
      expect(loadConfig({}).trustProxyHops).toBe(0);
      expect(loadConfig({ TRUST_PROXY: '1' }).trustProxyHops).toBe(1);
      expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxyHops).toBe(1);
      expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxyHops).toBe(0);
      expect(loadConfig({ TRUST_PROXY: '2' }).trustProxyHops).toBe(2);
    });

    it('refuses anything else, rather than trusting every hop', () => {
      for (const bad of ['yes', '-1', '11', '1.5', 'all'])
        expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
    });
  });
});

describe('loggableUrl', () => {
  it('shows scheme, host and port only: no key in the path, no user, no query', () => {
    expect(loggableUrl('https://base-mainnet.g.alchemy.com/v2/SECRETKEY')).toBe('https://base-mainnet.g.alchemy.com');
    expect(loggableUrl('https://user:pass@rpc.example.com:8443/x?key=SECRET')).toBe('https://rpc.example.com:8443');
    expect(loggableUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(loggableUrl('not a url SECRET')).toBe('(unreadable URL)');
  });
});
