import { embeddedIpv4, isLoopbackAddress, refusedAddress } from './ip-address';

describe('refusedAddress', () => {
  it.each(['93.184.216.34', '1.1.1.1', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '[2a00:1450::1]'])(
    'lets the public address %s be reached',
    (address) => {
      expect(refusedAddress(address, false)).toBeNull();
    },
  );

  it.each([
    ['loopback', '127.0.0.1'],
    ['loopback', '127.8.9.10'],
    ['loopback', '::1'],
    ['loopback written out in full', '0:0:0:0:0:0:0:1'],
    ['private', '10.1.2.3'],
    ['private', '172.16.0.1'],
    ['private', '192.168.1.1'],
    ['link-local (cloud metadata)', '169.254.169.254'],
    ['CGNAT', '100.64.0.1'],
    ['unspecified', '0.0.0.0'],
    ['unspecified', '::'],
    ['benchmarking', '198.18.0.1'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['IETF protocol assignments', '192.0.0.1'],
    ['documentation', '192.0.2.2'],
    ['documentation', '198.51.100.7'],
    ['documentation', '203.0.113.9'],
    ['unique local', 'fd00::1'],
    ['link-local', 'fe80::1'],
    ['link-local with a zone', 'fe80::1%eth0'],
    ['site-local', 'fec0::1'],
    ['multicast', 'ff02::1'],
    ['documentation', '2001:db8::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped loopback written out in full', '0:0:0:0:0:ffff:7f00:1'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
    ['IPv4-compatible', '::7f00:1'],
    ['NAT64 of a private address', '64:ff9b::a00:1'],
    ['NAT64 (local use) of a private address', '64:ff9b:1::a00:1'],
    ['6to4 of a private address', '2002:c0a8:101::1'],
    ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['Teredo, compressed', '2001::1'],
    ['documentation (3fff::/20)', '3fff::1'],
    ['documentation (3fff::/20), past its first group', '3fff:fff:1::1'],
    ['discard', '100::1'],
    ['ORCHID', '2001:10::1'],
    ['ORCHIDv2', '2001:2f::1'],
    ['SRv6 SIDs', '5f00::1'],
  ])('refuses %s %s', (_kind, address) => {
    expect(refusedAddress(address, false)).not.toBeNull();
  });

  it.each([
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2a00:1450:4001::1',
    '3fff:1000::1',
    '2001:30::1',
    '100:1::1',
  ])('lets a public IPv6 address %s through', (address) => {
    expect(refusedAddress(address, false)).toBeNull();
  });

  it('lets loopback be reached only when asked, and never a private address', () => {
    expect(refusedAddress('127.0.0.1', true)).toBeNull();
    expect(refusedAddress('::1', true)).toBeNull();
    expect(refusedAddress('0.0.0.0', true)).toMatch(/private|reserved/);
    expect(refusedAddress('::ffff:127.0.0.1', true)).toMatch(/private|reserved/);
    expect(refusedAddress('10.0.0.1', true)).toMatch(/private/);
  });

  it('says why', () => {
    expect(refusedAddress('127.0.0.1', false)).toBe('a loopback address');
    expect(refusedAddress('169.254.169.254', false)).toBe('a private, link-local or reserved address');
  });
});

describe('isLoopbackAddress', () => {
  it('knows 127.0.0.0/8 and ::1, nothing else', () => {
    expect(['127.0.0.1', '127.255.0.1', '::1'].map(isLoopbackAddress)).toEqual([true, true, true]);
    expect(['128.0.0.1', '10.0.0.1', '::2', 'localhost'].map(isLoopbackAddress)).toEqual([false, false, false, false]);
  });
});

describe('embeddedIpv4', () => {
  it.each([
    ['[::ffff:5db8:d822]', '93.184.216.34', true],
    ['::ffff:127.0.0.1', '127.0.0.1', true],
    ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1', true],
    ['[::5db8:d822]', '93.184.216.34', false],
    ['[64:ff9b::5db8:d822]', '93.184.216.34', false],
    ['[64:ff9b:1::5db8:d822]', '93.184.216.34', false],
    ['[2002:5db8:d822::1]', '93.184.216.34', false],
    // Teredo: the client's address is the last 32 bits, inverted.
    ['[2001:0:4136:e378:8000:63bf:a247:29dd]', '93.184.214.34', false],
  ])('reads %s as %s', (address, ipv4, mapped) => {
    expect(embeddedIpv4(address)).toEqual({ ipv4, mapped });
  });

  it('finds none in other addresses', () => {
    for (const address of ['::1', '[2001:db8::1]', '[fd00::1]', '2606:4700:4700::1111', '93.184.216.34', 'example.com'])
      expect({ address, embedded: embeddedIpv4(address) }).toEqual({ address, embedded: undefined });
  });
});
