import {
  caip2,
  findNetworkByX402,
  getNetwork,
  isNetworkName,
  NETWORK_NAMES,
  NETWORKS,
  type NetworkInfo,
} from './networks';

describe('NETWORKS', () => {
  it('describes Base mainnet and its USDC ("USD Coin", version 2)', () => {
    expect(NETWORKS.base).toEqual<NetworkInfo>({
      name: 'base',
      chainId: 8453,
      caip2: 'eip155:8453',
      x402Network: 'base',
      usdc: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2', decimals: 6 },
      explorerTxUrl: 'https://basescan.org/tx/',
    });
  });

  it('describes Base Sepolia and its USDC ("USDC", version 2)', () => {
    expect(NETWORKS['base-sepolia']).toEqual<NetworkInfo>({
      name: 'base-sepolia',
      chainId: 84532,
      caip2: 'eip155:84532',
      x402Network: 'base-sepolia',
      usdc: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 },
      explorerTxUrl: 'https://sepolia.basescan.org/tx/',
    });
  });

  it('describes the local chain, whose USDC address is known only at start', () => {
    expect(NETWORKS.local).toEqual<NetworkInfo>({
      name: 'local',
      chainId: 31337,
      caip2: 'eip155:31337',
      x402Network: 'local',
      usdc: { address: null, name: 'USD Coin', version: '2', decimals: 6 },
      explorerTxUrl: null,
    });
  });

  it('keeps each entry consistent: key, name and CAIP-2 id agree', () => {
    for (const name of NETWORK_NAMES) {
      expect(NETWORKS[name].name).toBe(name);
      expect(NETWORKS[name].caip2).toBe(caip2(NETWORKS[name].chainId));
    }
    expect([...NETWORK_NAMES].sort()).toEqual(['base', 'base-sepolia', 'local']);
  });

  it('cannot be changed at run time, not even nested', () => {
    expect(Object.isFrozen(NETWORKS)).toBe(true);
    expect(Object.isFrozen(NETWORKS.base)).toBe(true);
    expect(Object.isFrozen(NETWORKS.base.usdc)).toBe(true);
    expect(() => {
      (NETWORKS.base.usdc as { name: string }).name = 'Fake';
    }).toThrow(TypeError);
  });
});

describe('getNetwork', () => {
  it('returns a known network', () => {
    expect(getNetwork('base-sepolia')).toBe(NETWORKS['base-sepolia']);
    expect(getNetwork('local').chainId).toBe(31337);
  });

  it('throws on an unknown name, listing the valid ones', () => {
    expect(() => getNetwork('mainnet')).toThrow('Unknown network "mainnet": expected one of local, base-sepolia, base');
    expect(() => getNetwork('Base')).toThrow(Error);
    expect(() => getNetwork('toString')).toThrow(Error);
    expect(() => getNetwork('')).toThrow(Error);
  });
});

describe('isNetworkName', () => {
  it('accepts only the three names, not inherited keys', () => {
    expect(isNetworkName('base')).toBe(true);
    expect(isNetworkName('constructor')).toBe(false);
    expect(isNetworkName(8453)).toBe(false);
  });
});

describe('caip2', () => {
  it('writes eip155:<chainId>', () => {
    expect(caip2(8453)).toBe('eip155:8453');
    expect(caip2(1)).toBe('eip155:1');
  });

  it.each([0, -1, 1.5, NaN, Infinity])('throws RangeError for %p', (chainId) => {
    expect(() => caip2(chainId)).toThrow(RangeError);
  });
});

describe('findNetworkByX402', () => {
  it('finds a network by its v1 name or its v2 CAIP-2 id', () => {
    expect(findNetworkByX402('base')).toBe(NETWORKS.base);
    expect(findNetworkByX402('eip155:8453')).toBe(NETWORKS.base);
    expect(findNetworkByX402('base-sepolia')).toBe(NETWORKS['base-sepolia']);
    expect(findNetworkByX402('eip155:84532')).toBe(NETWORKS['base-sepolia']);
    expect(findNetworkByX402('eip155:31337')).toBe(NETWORKS.local);
  });

  it('returns null for other networks', () => {
    expect(findNetworkByX402('eip155:1')).toBeNull();
    expect(findNetworkByX402('solana')).toBeNull();
    expect(findNetworkByX402('')).toBeNull();
  });
});
