import { encodeBase64Json, NETWORKS, signGate } from '@crawlgate/core';
import { offerAhead, paidGateRef, readOffers } from './offers';

const USDC = NETWORKS.base.usdc;
const PAY_TO = '0x000000000000000000000000000000000000dEaD';

/** The verify_url readOffers keeps from a 402 of the page at pageUrl naming verifyUrl; undefined when it drops it. */
async function keptVerifyUrl(pageUrl: string, verifyUrl: string): Promise<string | undefined> {
  const accepts = [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      asset: USDC.address,
      extra: { name: USDC.name, version: USDC.version },
    },
  ];
  const response = new Response(JSON.stringify({ x402Version: 1, accepts, verify_url: verifyUrl }), {
    status: 402,
    headers: { 'content-type': 'application/json' },
  });
  // A fetched response's url is its page's; a constructed one has none.
  Object.defineProperty(response, 'url', { value: pageUrl });
  const [offer] = await readOffers(response);
  expect(offer).toBeDefined();
  return offer.verifyUrl;
}

/** A gate of /page on base, for ref, as a site signs it. */
const gateId = (ref: string) =>
  signGate(
    {
      siteId: '11111111-1111-4111-8111-111111111111',
      ref,
      path: '/page',
      micros: 1000n,
      chainId: NETWORKS.base.chainId,
      asset: USDC.address!,
      payTo: PAY_TO,
      iat: 1_800_000_000,
      exp: 1_800_000_300,
    },
    'secret',
  );

/** readOffers of a Crawlgate 402 for `page`: `accepted` in its v2 PAYMENT-REQUIRED, its verify_url naming `gate`. */
function v2Offers(accepted: Record<string, unknown>, page: string, gate: string) {
  const required = { x402Version: 2, accepts: [accepted], resource: { url: page } };
  const body = { verify_url: `https://api.crawlgate.example/v1/gates/${encodeURIComponent(gate)}/verify` };
  const response = new Response(JSON.stringify(body), {
    status: 402,
    headers: { 'content-type': 'application/json', 'payment-required': encodeBase64Json(required) },
  });
  // A fetched response's url is its page's; a constructed one has none.
  Object.defineProperty(response, 'url', { value: page });
  return readOffers(response);
}

const GATE = '/v1/gates/gate_1/verify';
const PUBLIC_PAGE = 'https://pages.example/page';

describe('a page written as an IPv6 form embedding a public IPv4 address is a public page', () => {
  // 93.184.216.34 is 5db8:d822; Teredo's client address is the last 32 bits inverted (a247:27dd).
  const pages = [
    'http://[::ffff:5db8:d822]/page', // IPv4-mapped: Node connects to it as IPv4
    'http://[::5db8:d822]/page', // IPv4-compatible
    'http://[64:ff9b::5db8:d822]/page', // NAT64
    'http://[64:ff9b:1::5db8:d822]/page', // local-use NAT64
    'http://[2002:5db8:d822::1]/page', // 6to4
    'http://[2001:0:5db8:d822::1]/page', // Teredo, the public address as its server
    'http://[2001:0:4136:e378:8000:63bf:a247:27dd]/page', // Teredo, the public address as its client
    'https://[ff02::1]/page', // multicast: no host of this machine or network
  ];
  it.each(
    pages.flatMap((page) => [
      [page, `http://127.0.0.1:2375${GATE}`],
      [page, `http://localhost${GATE}`],
    ]),
  )('from %s, drops the plain-http loopback %s', async (page, verifyUrl) => {
    expect(await keptVerifyUrl(page, verifyUrl)).toBeUndefined();
  });
  it.each(
    pages.flatMap((page) => [
      [page, `https://169.254.169.254${GATE}`],
      [page, `https://127.0.0.1${GATE}`],
      [page, `https://10.0.0.5${GATE}`],
    ]),
  )('from %s, drops %s', async (page, verifyUrl) => {
    expect(await keptVerifyUrl(page, verifyUrl)).toBeUndefined();
  });
  it.each(pages)('from %s, keeps a public https API', async (page) => {
    expect(await keptVerifyUrl(page, `https://api.crawlgate.example${GATE}`)).toBe(
      `https://api.crawlgate.example${GATE}`,
    );
  });
});

describe('a page of a local network written as an IPv6 form reaches that network, never this machine', () => {
  it.each([
    'https://[::ffff:c0a8:114]/page', // 192.168.1.20, mapped
    'https://[64:ff9b::7f00:1]/page', // NAT64 of 127.0.0.1: the gateway's, not this machine's
    'https://[2002:7f00:1::1]/page', // 6to4 of 127.0.0.1: a relay's
    'https://[fd00::20]/page',
  ])('from %s', async (page) => {
    expect(await keptVerifyUrl(page, `https://10.0.0.5${GATE}`)).toBe(`https://10.0.0.5${GATE}`);
    expect(await keptVerifyUrl(page, `https://127.0.0.1${GATE}`)).toBeUndefined();
    expect(await keptVerifyUrl(page, `https://169.254.169.254${GATE}`)).toBeUndefined();
  });
});

describe('plain http to loopback only from a page on this machine', () => {
  it.each([
    ['http://127.0.0.1:3000/page', true],
    ['http://localhost:3000/page', true],
    ['http://localhost.:3000/page', true],
    ['http://[::1]:3000/page', true],
    ['http://[::ffff:7f00:1]:3000/page', true],
    ['http://0.0.0.0:3000/page', true],
    ['http://app.localhost:3000/page', true],
    ['http://192.168.1.20:3000/page', false],
    ['http://[::ffff:5db8:d822]/page', false],
  ])('from %s: %s', async (page, kept) => {
    const verifyUrl = `http://127.0.0.1:4000${GATE}`;
    expect(await keptVerifyUrl(page, verifyUrl)).toBe(kept ? verifyUrl : undefined);
  });
});

describe('local-only names are of this machine or its network', () => {
  it.each([
    'https://vm:2375', // a dotless name: /etc/hosts or a search domain
    'https://vm.:2375',
    'https://ip6-localhost',
    'https://ip6-loopback',
    'https://kubernetes',
    'https://kubernetes.default.svc',
    'https://metadata',
    'https://vault.service.consul',
    'https://host.ts.net',
    'https://db.localnet',
    'https://redis.docker',
    'https://api.cluster.local',
    'https://localhost4.localdomain4:8443', // Red Hat's and Amazon Linux's /etc/hosts
    'https://localhost6.localdomain6:8443',
    'https://localhost.localdomain',
  ])('from a public page, drops %s', async (origin) => {
    expect(await keptVerifyUrl(PUBLIC_PAGE, `${origin}${GATE}`)).toBeUndefined();
  });

  it.each(['https://metadata.google.internal', 'https://host.docker.internal:2376', 'https://gateway.docker.internal'])(
    "drops %s, a service of the agent's own host, from a page of its network",
    async (origin) => {
      expect(await keptVerifyUrl('https://192.168.1.20/page', `${origin}${GATE}`)).toBeUndefined();
    },
  );

  it('reads a single label written absolute ("ai.") as a public page, not its network', async () => {
    expect(await keptVerifyUrl('https://ai./page', `https://10.0.0.5${GATE}`)).toBeUndefined();
    expect(await keptVerifyUrl('https://wiki/page', `https://10.0.0.5${GATE}`)).toBe(`https://10.0.0.5${GATE}`);
  });

  it("drops this machine's own hostname from a page of its network", async () => {
    const ownName = process.getBuiltinModule('node:os').hostname();
    expect(await keptVerifyUrl('https://192.168.1.20/page', `https://${ownName}${GATE}`)).toBeUndefined();
  });

  it.each([
    ['https://192.168.1.20/page', 'https://kubernetes.default.svc'],
    ['https://wiki/page', 'https://api'],
    ['https://ip6-localhost/page', 'https://localhost'],
  ])('from %s, keeps %s', async (page, origin) => {
    expect(await keptVerifyUrl(page, `${origin}${GATE}`)).toBe(`${origin}${GATE}`);
  });

  // Tailscale Funnel serves ts.net names to the internet: such a page may be anyone's.
  it('reads a page on a ts.net name as public', async () => {
    expect(await keptVerifyUrl('https://node.tailnet.ts.net/page', `https://10.0.0.5${GATE}`)).toBeUndefined();
  });
});

describe('honest set-ups', () => {
  it.each([
    ['http://127.0.0.1:3000/page', `http://127.0.0.1:4000${GATE}`],
    ['http://localhost:3000/page', `http://localhost:4000${GATE}`],
    ['https://localhost/page', `https://169.254.169.254${GATE}`],
    ['https://192.168.1.20/page', `https://10.0.0.5${GATE}`],
    ['https://printer.local/page', `https://gate.lan${GATE}`],
    [PUBLIC_PAGE, `https://api.crawlgate.example${GATE}`],
    ['https://[2606:4700::1111]/page', `https://api.crawlgate.example${GATE}`],
  ])('from %s, keeps %s', async (page, verifyUrl) => {
    expect(await keptVerifyUrl(page, verifyUrl)).toBe(verifyUrl);
  });
});

describe('a verify_url naming another gate than the one a payment echoes', () => {
  const offersOf = async (echoed: string, named: string) => {
    const accepted = {
      scheme: 'exact',
      network: NETWORKS.base.caip2,
      amount: '1000',
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      asset: USDC.address,
      extra: { name: USDC.name, version: USDC.version, gate_id: echoed },
    };
    return v2Offers(accepted, 'https://pages.example/page', named);
  };
  const GATE_Y = '6f9619ff-8b86-4d01-b42d-00cf4fc964ff';
  const GATE_X = '7f9619ff-8b86-4d01-b42d-00cf4fc964ff';

  it('is dropped, so no token of that other gate passes for this payment’s', async () => {
    const [offer] = await offersOf(gateId(GATE_Y), gateId(GATE_X));
    expect(offer).toMatchObject({ verifyUrl: undefined });
    expect(offer.gateRef).toBeUndefined();
    expect(paidGateRef(offer)).toBe(GATE_Y);
  });

  it('is kept when it names the gate the payment echoes', async () => {
    const [offer] = await offersOf(gateId(GATE_Y), gateId(GATE_Y));
    expect(offer.verifyUrl).toMatch(/^https:\/\/api\.crawlgate\.example\/v1\/gates\//);
    expect([offer.gateRef, paidGateRef(offer)]).toEqual([GATE_Y, GATE_Y]);
  });
});

describe('offerAhead', () => {
  const gate = gateId('6f9619ff-8b86-4d01-b42d-00cf4fc964ff');
  const terms = {
    name: USDC.name,
    version: USDC.version,
    escrow: '0x4020000000000000000000000000000000000001',
    receiverAuthorizer: '0x000000000000000000000000000000000000bEEF',
    withdrawDelay: 86_400,
  };
  /** The batch-settlement offer of a corrective 402 for /a, naming its gate and the channel's state. */
  async function corrected() {
    const accepted = {
      scheme: 'batch-settlement',
      network: NETWORKS.base.caip2,
      amount: '1000',
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      asset: USDC.address,
      extra: {
        ...terms,
        gate_id: gate,
        channelState: { channelId: `0x${'ab'.repeat(32)}`, chargedCumulativeAmount: '5000' },
        voucherState: { signedMaxClaimable: '5000', signature: `0x${'cd'.repeat(65)}` },
      },
    };
    const [offer] = await v2Offers(accepted, 'https://pages.example/a', gate);
    expect([offer.scheme, offer.gateRef, offer.batch?.channelState?.chargedCumulativeAmount]).toEqual([
      'batch-settlement',
      '6f9619ff-8b86-4d01-b42d-00cf4fc964ff',
      5000n,
    ]);
    return offer;
  }

  it('names no gate, no verify_url and no channel state: the same terms and price, for the page asked', async () => {
    const charged = await corrected();
    const ahead = offerAhead(charged, new URL('https://pages.example/b?q=1'));
    expect(ahead.v2).toEqual({
      accepted: { ...charged.v2!.accepted, extra: terms },
      resource: { url: 'https://pages.example/b?q=1' },
    });
    expect([ahead.verifyUrl, ahead.gateRef, ahead.gateExp, paidGateRef(ahead)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(ahead.batch).toEqual({
      escrow: terms.escrow,
      receiverAuthorizer: terms.receiverAuthorizer,
      withdrawDelay: 86_400,
    });
    expect([ahead.amount, ahead.payTo, ahead.asset, ahead.chainId]).toEqual([
      1000n,
      PAY_TO,
      USDC.address,
      NETWORKS.base.chainId,
    ]);
  });

  it('leaves the offer it copies as it was', async () => {
    const charged = await corrected();
    const before = structuredClone(charged);
    offerAhead(charged, new URL('https://pages.example/b'));
    expect(charged).toEqual(before);
  });
});
