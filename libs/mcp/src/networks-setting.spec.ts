import { parseNetworksSetting } from './networks-setting';

describe('parseNetworksSetting (CRAWLGATE_NETWORKS)', () => {
  it('reads a comma list of network names, ignoring spaces and empty items', () => {
    expect(parseNetworksSetting(' base, base-sepolia ,')).toEqual({ networks: ['base', 'base-sepolia'] });
  });

  it('reads JSON naming assets and domains', () => {
    const json =
      '[ "base", {"network":"local","asset":"0x5FbDB2315678afecb367f032d93F642f64180aa3"}, {"network":"eip155:10","asset":"0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85","domain":{"name":"USD Coin","version":"2"}} ]';
    expect(parseNetworksSetting(json)).toEqual({
      networks: [
        'base',
        { network: 'local', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3' },
        {
          network: 'eip155:10',
          asset: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
          domain: { name: 'USD Coin', version: '2' },
        },
      ],
    });
  });

  it.each([
    ['', 'names no network'],
    [' , ', 'names no network'],
    ['[', 'is not valid JSON'],
    ['[]', 'must be a non-empty JSON array'],
    ['[1]', 'entry 0: must be a network name or {"network", "asset", "domain"?}'],
    ['[{"network":"local"}]', 'entry 0: "network" and "asset" must be strings'],
    ['["base", {"network":"local","asset":"0x1","chain":1}]', 'entry 1: unknown field "chain"'],
    [
      '[{"network":"local","asset":"0x1","domain":{"name":"USDC"}}]',
      'entry 0: "domain" must be {"name", "version"}, both strings',
    ],
  ])('refuses %j: %s', (text, problem) => {
    expect(parseNetworksSetting(text)).toEqual({ problem });
  });
});
