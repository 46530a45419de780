import { parseIp, parsePrefix, withoutPort } from './ip-prefix';

describe('parseIp', () => {
  it('reads IPv4, IPv6 and IPv4-mapped IPv6, the mapped form equal to its IPv4', () => {
    expect(parseIp('66.249.66.1')).toBe(0xffff_42f9_4201n);
    expect(parseIp('::ffff:66.249.66.1')).toBe(parseIp('66.249.66.1'));
    expect(parseIp('::FFFF:42f9:4201')).toBe(parseIp('66.249.66.1'));
    expect(parseIp('0:0:0:0:0:ffff:66.249.66.1')).toBe(parseIp('66.249.66.1'));
    expect(parseIp('::1')).toBe(1n);
    expect(parseIp('::')).toBe(0n);
    expect(parseIp('2001:db8::1')).toBe(0x2001_0db8_0000_0000_0000_0000_0000_0001n);
    expect(parseIp('1:2:3:4:5:6:7:8')).toBe(0x0001_0002_0003_0004_0005_0006_0007_0008n);
    expect(parseIp('1::')).toBe(1n << 112n);
  });

  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '01.2.3.4',
    '1.2.3.256',
    '1.2.3.4 ',
    ' 1.2.3.4',
    '1.2.3.4:80',
    '[::1]',
    'fe80::1%eth0',
    '1.2.3.4::',
    '::ffff:1.2.3.04',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:1.2.3.4',
    '1::2::3',
    ':1::',
    '12345::',
    'localhost',
    '0x7f.0.0.1',
  ])('refuses %j', (text) => {
    expect(parseIp(text)).toBeNull();
  });
});

describe('parsePrefix', () => {
  it('covers the addresses of the prefix, its host bits masked', () => {
    expect(parsePrefix('66.249.64.0/27')).toEqual({ start: parseIp('66.249.64.0'), end: parseIp('66.249.64.31') });
    expect(parsePrefix('66.249.64.7/27')).toEqual(parsePrefix('66.249.64.0/27'));
    expect(parsePrefix('2001:4860:4801:10::/64')).toEqual({
      start: parseIp('2001:4860:4801:10::'),
      end: parseIp('2001:4860:4801:10:ffff:ffff:ffff:ffff'),
    });
    expect(parsePrefix('1.2.3.4/32')).toEqual({ start: parseIp('1.2.3.4'), end: parseIp('1.2.3.4') });
  });

  it.each(['1.2.3.4', '1.2.3.4/33', '1.2.3.4/', '1.2.3.4/-1', '1.2.3.4/8a', '::/129', 'x/8'])('refuses %j', (text) => {
    expect(parsePrefix(text)).toBeNull();
  });
});

describe('withoutPort', () => {
  it('takes the port off an address as proxies write it, and leaves anything else as it is', () => {
    expect(withoutPort('203.0.113.9:4711')).toBe('203.0.113.9');
    expect(withoutPort('[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(withoutPort('[2001:db8::1]')).toBe('2001:db8::1');
    for (const text of ['203.0.113.9', '2001:db8::1', '::ffff:1.2.3.4', 'unknown', '1.2.3.4:', '1.2.3.4:123456', ''])
      expect(withoutPort(text)).toBe(text);
  });
});
