import { MAX_PREFIXES, parseRangeList } from './range-list';

/** The shape Google publishes googlebot.json in (Bing, Apple, OpenAI and Perplexity use the same). */
const GOOGLE_STYLE = JSON.stringify({
  creationTime: '2026-11-20T23:00:46.000000',
  prefixes: [
    { ipv6Prefix: '2001:4860:4801:10::/64' },
    { ipv4Prefix: '66.249.64.0/27' },
    { ipv4Prefix: '66.249.64.32/27' },
    { ipv4Prefix: '192.178.5.0/27' },
  ],
});

function addressesOf(text: string) {
  const parsed = parseRangeList(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.addresses;
}

describe('parseRangeList', () => {
  it('finds the addresses inside the published prefixes, and none outside', () => {
    const addresses = addressesOf(GOOGLE_STYLE);
    expect(addresses.size).toBe(3); // the two adjacent /27s merged
    for (const inside of ['66.249.64.0', '66.249.64.31', '66.249.64.63', '::ffff:66.249.64.40', '2001:4860:4801:10::1'])
      expect([inside, addresses.has(inside)]).toEqual([inside, true]);
    for (const outside of ['66.249.63.255', '66.249.64.64', '192.178.4.255', '2001:4860:4801:11::', '127.0.0.1', '::1'])
      expect([outside, addresses.has(outside)]).toEqual([outside, false]);
  });

  it('never takes an unreadable address for one inside', () => {
    const addresses = addressesOf(GOOGLE_STYLE);
    for (const junk of ['', '66.249.64.1 ', '066.249.64.1', '66.249.64', 'x', '[2001:4860:4801:10::1]'])
      expect(addresses.has(junk)).toBe(false);
  });

  it('leaves out malformed entries and prefixes broader than any crawler network', () => {
    const addresses = addressesOf(
      JSON.stringify({
        prefixes: [
          { ipv4Prefix: '0.0.0.0/0' },
          { ipv4Prefix: '10.0.0.0/7' },
          { ipv6Prefix: '::/0' },
          { ipv6Prefix: '2000::/3' },
          { ipv4Prefix: '2001:db8::/64' },
          { ipv6Prefix: '1.2.3.0/24' },
          { ipv4Prefix: 17 },
          'x',
          null,
          { ipv4Prefix: '203.0.113.0/24' },
        ],
      }),
    );
    expect(addresses.size).toBe(1);
    expect(addresses.has('203.0.113.9')).toBe(true);
    expect(addresses.has('8.8.8.8')).toBe(false);
    expect(addresses.has('2001:db8::1')).toBe(false);
  });

  it('takes a /8 of IPv4 and a /16 of IPv6 at most', () => {
    const addresses = addressesOf(
      JSON.stringify({
        prefixes: [
          { ipv4Prefix: '12.0.0.0/8' },
          { ipv4Prefix: '14.0.0.0/7' },
          { ipv6Prefix: '2a00::/16' },
          { ipv6Prefix: '2c00::/15' },
        ],
      }),
    );
    expect(addresses.size).toBe(2);
    expect(addresses.has('12.255.255.255')).toBe(true);
    expect(addresses.has('14.0.0.1')).toBe(false);
    expect(addresses.has('2a00:ffff::1')).toBe(true);
    expect(addresses.has('2c00::1')).toBe(false);
  });

  it('never lets an IPv6 entry cover IPv4 (the IPv4-mapped block holds every IPv4 address)', () => {
    const addresses = addressesOf(
      JSON.stringify({
        prefixes: [
          { ipv6Prefix: '::/16' },
          { ipv6Prefix: '::ffff:0:0/96' },
          { ipv6Prefix: '::ffff:0.0.0.0/96' },
          { ipv6Prefix: '::ffff:cb00:7100/120' },
          { ipv6Prefix: '2001:4860:4801:10::/64' },
        ],
      }),
    );
    for (const outside of ['203.0.113.50', '8.8.8.8', '::ffff:8.8.8.8', '::1'])
      expect([outside, addresses.has(outside)]).toEqual([outside, false]);
    expect(addresses.has('2001:4860:4801:10::1')).toBe(true);
  });

  it.each([
    ['not JSON', '<html>'],
    ['no "prefixes" list', '{}'],
    ['no "prefixes" list', 'null'],
    ['no usable prefix', '{"prefixes":[]}'],
    ['no usable prefix', '{"prefixes":[{"ipv4Prefix":"0.0.0.0/0"}]}'],
    [
      `more than ${MAX_PREFIXES} prefixes`,
      JSON.stringify({ prefixes: Array(MAX_PREFIXES + 1).fill({ ipv4Prefix: '1.2.3.0/24' }) }),
    ],
  ])('refuses a document with %s', (reason, text) => {
    expect(parseRangeList(text)).toEqual({ ok: false, reason });
  });
});
