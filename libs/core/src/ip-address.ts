/*
 * Which IP addresses a fetch made because someone else asked (an agent's key directory, a page an
 * AI assistant was told to read) may reach: public ones only. A loopback, private, link-local,
 * CGNAT, unique-local, multicast, documentation or unspecified address, or an IPv6 form that
 * embeds one (IPv4-mapped, NAT64, 6to4), would let whoever picks the URL make this process send
 * requests into its own host or network (cloud metadata at 169.254.169.254, an admin port on
 * 127.0.0.1). Pure: resolving a name and connecting to the checked address is the caller's part.
 */

/** Why an IP address (a literal, or what a name resolved to) is not reached; null when it may be. */
export function refusedAddress(address: string, allowLoopback: boolean): string | null {
  const ip = canonicalIp(address);
  if (ip === null) return 'not an address it can check';
  if (isLoopbackAddress(ip)) return allowLoopback ? null : 'a loopback address';
  if (isPrivateIp(ip)) return 'a private, link-local or reserved address';
  return null;
}

/** 127.0.0.0/8 and ::1, as the URL parser writes them (IPv6 without brackets). */
export const isLoopbackAddress = (ip: string): boolean => ip === '::1' || /^127\./.test(ip);

/** What an IPv6 form stands for when it embeds an IPv4 address: that address, and whether a socket connects to it as IPv4. */
export interface EmbeddedIpv4 {
  ipv4: string;
  /** IPv4-mapped (::ffff:0:0/96): the socket reaches the IPv4 address itself, no gateway between. */
  mapped: boolean;
}

/**
 * The IPv4 address an IPv6 address embeds (bracketed or not): IPv4-mapped ::ffff:0:0/96, and the
 * translated forms reached through a gateway or relay: IPv4-compatible ::/96 (but :: and ::1), NAT64 64:ff9b::/96
 * and the /96 forms of 64:ff9b:1::/48 (its others place it elsewhere), 6to4 2002::/16, and
 * Teredo 2001::/32's client (the last 32 bits, inverted). Undefined for any other address.
 */
export function embeddedIpv4(address: string): EmbeddedIpv4 | undefined {
  const ip = canonicalIp(address);
  if (ip === null || !ip.includes(':') || ip.includes('.')) return undefined;
  const [head, tail] = ip.split('::');
  const groupsOf = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const [left, right] = [groupsOf(head), groupsOf(tail)];
  const g = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const zeroes = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zeroes(0, 5) && g[5] === 0xffff) return { ipv4: ipv4(g[6], g[7]), mapped: true };
  // IPv4-compatible, but not the unspecified :: nor the loopback ::1.
  if (zeroes(0, 6) && (g[6] !== 0 || g[7] > 1)) return { ipv4: ipv4(g[6], g[7]), mapped: false };
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] <= 1 && zeroes(3, 6)) return { ipv4: ipv4(g[6], g[7]), mapped: false };
  if (g[0] === 0x2002) return { ipv4: ipv4(g[1], g[2]), mapped: false };
  if (g[0] === 0x2001 && g[1] === 0) return { ipv4: ipv4(~g[6] & 0xffff, ~g[7] & 0xffff), mapped: false };
  return undefined;
}

/**
 * IPv6 as the URL parser writes it (compressed, lower case: "0:0:0:0:0:ffff:7f00:1" is
 * "::ffff:7f00:1"), the form the checks below read; anything else lower-cased. Null for an IPv6
 * form the parser refuses (one with a zone, "fe80::1%eth0").
 */
function canonicalIp(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!bare.includes(':')) return bare.toLowerCase();
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

function isPrivateIp(host: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a >= 224 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      // IETF protocol assignments 192.0.0.0/24 and the documentation ranges: no public host there.
      (a === 192 && b === 0 && (Number(v4[3]) === 0 || Number(v4[3]) === 2)) ||
      (a === 198 && b === 51 && Number(v4[3]) === 100) ||
      (a === 203 && b === 0 && Number(v4[3]) === 113)
    );
  }
  if (!host.includes(':')) return false;
  // IPv6 (as the URL parser writes it: compressed, lower case): unique local fc00::/7, link-local
  // fe80::/10 and site-local fec0::/10, and every form that embeds an IPv4 address, which may be a
  // private one: "::" forms (unspecified, IPv4-mapped and -compatible), NAT64 64:ff9b::/96 and
  // 64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32; multicast ff00::/8, documentation
  // 2001:db8::/32 and 3fff::/20, discard 100::/64, ORCHID 2001:10::/28 and 2001:20::/28, and SRv6
  // SIDs 5f00::/16: no public host in any.
  return (
    /^(?:f[cdf]|fe[89a-f])/.test(host) ||
    host.startsWith('::') ||
    /^(?:64:ff9b:|2002:|2001:db8:|2001:0?:|2001:[12][0-9a-f]:|3fff:(?:[0-9a-f]{1,3})?:|100::|5f00:)/.test(host)
  );
}
