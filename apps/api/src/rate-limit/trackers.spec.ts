import { clientNetwork } from './trackers';

describe('clientNetwork', () => {
  it('is the /24 of an IPv4 address, mapped into IPv6 or not', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.0/24');
    expect(clientNetwork('203.0.113.250')).toBe(clientNetwork('203.0.113.7'));
    expect(clientNetwork('::ffff:203.0.113.9')).toBe('203.0.113.0/24');
    expect(clientNetwork('::FFFF:203.0.113.9')).toBe('203.0.113.0/24');
    expect(clientNetwork('0:0:0:0:0:ffff:203.0.113.9')).toBe('203.0.113.0/24');
    expect(clientNetwork('203.0.114.7')).not.toBe(clientNetwork('203.0.113.7'));
  });

  it('is the /48 of an IPv6 address, whichever /64 of it', () => {
    expect(clientNetwork('2001:db8:1:2::1')).toBe('2001:db8:1::/48');
    expect(clientNetwork('2001:db8:1:ffff::9')).toBe('2001:db8:1::/48');
    expect(clientNetwork('2001:db8:2::1')).not.toBe(clientNetwork('2001:db8:1::1'));
  });

  it('puts an address it cannot read in a network of its own', () => {
    expect(clientNetwork(undefined)).toBe(clientNetwork(''));
    expect(clientNetwork(undefined)).not.toBe(clientNetwork('203.0.113.7'));
  });
});
