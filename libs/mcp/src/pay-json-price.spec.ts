import { priceFromPayJson } from './pay-json-price';

const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const DOC = {
  version: 1,
  site: { id: 's', domain: 'news.example' },
  currency: 'USD',
  default_price_usd: '0.002',
  rules: [
    { path: '/free/*', price_usd: '0' },
    { path: '/premium/*', price_usd: '0.01' },
  ],
  payment: { network: 'base-sepolia', caip2: 'eip155:84532', asset: ASSET, pay_to: PAY_TO },
  free_paths: ['/robots.txt', '/sitemap*.xml', '/.well-known/**'],
};
const priced = (price_usd: string, amount: string) => ({
  free: false,
  offer: { x402_version: null, network: 'base-sepolia', asset: ASSET, pay_to: PAY_TO, amount, price_usd },
});

describe('priceFromPayJson', () => {
  it('prices a path by its first matching rule, else the default, reading the path as pricing does', () => {
    expect(priceFromPayJson(DOC, 'https://news.example/premium/story?ref=x')).toEqual(priced('0.01', '10000'));
    expect(priceFromPayJson(DOC, 'https://news.example/free/../premium/x')).toEqual(priced('0.01', '10000'));
    expect(priceFromPayJson(DOC, 'https://news.example/elsewhere')).toEqual(priced('0.002', '2000'));
    expect(priceFromPayJson(DOC, 'https://news.example/free/post')).toEqual({ free: true });
  });

  it('frees the free paths, "/**" covering everything below, but never a path with an escaped slash', () => {
    expect(priceFromPayJson(DOC, 'https://news.example/robots.txt')).toEqual({ free: true });
    expect(priceFromPayJson(DOC, 'https://news.example/sitemap-posts.xml')).toEqual({ free: true });
    expect(priceFromPayJson(DOC, 'https://news.example/.well-known/a/b')).toEqual({ free: true });
    expect(priceFromPayJson(DOC, 'https://news.example/.well-known/..%2Fpremium')).toEqual(priced('0.002', '2000'));
    expect(priceFromPayJson({ ...DOC, free_paths: ['/a/**/b', '[', '/x*'] }, 'https://news.example/a/z/b')).toEqual(
      priced('0.002', '2000'),
    );
    expect(priceFromPayJson({ ...DOC, free_paths: ['/x*'] }, 'https://news.example/xyz')).toEqual({ free: true });
  });

  it('refuses a document larger than any site publishes, and a path longer than a gate prices: each would hold the server', () => {
    // 142,814 free paths and an 8,000-character path held the event loop for 6.8 s, every call.
    const many = (n: number) => Array.from({ length: n }, (_, i) => `/x${i}*`);
    expect(() => priceFromPayJson({ ...DOC, free_paths: many(257) }, 'https://news.example/a')).toThrow(
      /more than 256 free_paths/,
    );
    const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `/r${i}/*`, price_usd: '0.001' }));
    expect(() => priceFromPayJson({ ...DOC, rules: rules(1001) }, 'https://news.example/a')).toThrow(
      /more than 1000 rules/,
    );
    expect(priceFromPayJson({ ...DOC, rules: rules(1000) }, 'https://news.example/r999/x')).toEqual(
      priced('0.001', '1000'),
    );
    expect(() => priceFromPayJson(DOC, `https://news.example/${'y'.repeat(2048)}`)).toThrow(/longer than/);
  });

  it('says nothing can be paid when the site has no pay_to yet', () => {
    expect(() =>
      priceFromPayJson({ ...DOC, payment: { ...DOC.payment, pay_to: null } }, 'https://news.example/premium/x'),
    ).toThrow(/no pay_to/);
  });

  it.each([
    [null, /version 1/],
    [{ ...DOC, version: 2 }, /version 1/],
    [{ ...DOC, rules: [{ path: '/a' }] }, /rules/],
    [{ ...DOC, default_price_usd: 0.002 }, /default_price_usd/],
    [{ ...DOC, default_price_usd: '5' }, /price "5"/],
    [{ ...DOC, payment: { network: 'base' } }, /payment/],
    // A quote repeats these: a site must not fill an assistant's context with them.
    [{ ...DOC, payment: { ...DOC.payment, network: 'x'.repeat(300_000) } }, /payment/],
    [{ ...DOC, payment: { ...DOC.payment, asset: `0x${'a'.repeat(300_000)}` } }, /payment/],
    [{ ...DOC, payment: { ...DOC.payment, pay_to: 'someone' } }, /payment/],
    [{ ...DOC, free_paths: '/robots.txt' }, /free_paths/],
    [{ ...DOC, rules: [{ path: '/a/**', price_usd: '0.1' }] }, /\*\*/],
  ])('refuses a document it cannot read (%#)', (document, problem) => {
    expect(() => priceFromPayJson(document, 'https://news.example/premium/x')).toThrow(problem);
  });
});
