import { respondJson } from './decision';
import { headerValue } from './request-headers';
import { gateRequestOf, responseOf } from './web-request';

describe('gateRequestOf', () => {
  it('reads a web Request’s method, whole URL, headers (lower-case names, repeats joined) and the given address', () => {
    const headers = new Headers([
      ['User-Agent', 'GPTBot/1.1'],
      ['X-Crawlgate-Token', 'a'],
      ['x-crawlgate-token', 'b'],
    ]);
    const request = gateRequestOf(new Request('https://site.test/post/1?x=1', { headers }), '10.0.0.1');
    expect(request).toMatchObject({ method: 'GET', url: 'https://site.test/post/1?x=1', ip: '10.0.0.1' });
    expect(headerValue(request.headers, 'user-agent')).toBe('GPTBot/1.1');
    expect(headerValue(request.headers, 'x-crawlgate-token')).toBe('a, b');
  });

  /** A Request as Cloudflare's edge hands it to a Worker: with its `cf` properties. */
  const fromEdge = (request: Request) => Object.assign(request, { cf: { colo: 'AMS' } });

  it('takes CF-Connecting-IP for the address on Cloudflare Workers only, and the given address first', () => {
    const request = () =>
      fromEdge(new Request('https://site.test/', { headers: { 'cf-connecting-ip': '66.249.66.1' } }));
    expect(gateRequestOf(request()).ip).toBeUndefined(); // Node: a header any client can write
    expect(gateRequestOf(request(), undefined, false).ip).toBeUndefined();
    expect(gateRequestOf(request(), undefined, true).ip).toBe('66.249.66.1');
    expect(gateRequestOf(request(), '10.0.0.1', true).ip).toBe('10.0.0.1');
    expect(gateRequestOf(fromEdge(new Request('https://site.test/')), undefined, true).ip).toBeUndefined();
  });

  it('takes CF-Connecting-IP only from a request that came through Cloudflare’s edge (self-hosted workerd says Cloudflare-Workers too)', () => {
    const request = new Request('https://site.test/', { headers: { 'cf-connecting-ip': '66.249.66.1' } });
    expect(gateRequestOf(request, undefined, true).ip).toBeUndefined();
    expect(gateRequestOf(Object.assign(request, { cf: null }), undefined, true).ip).toBeUndefined();
  });
});

describe('responseOf', () => {
  it('answers with the decision’s status, headers and body', async () => {
    const decision = respondJson(402, { detail: 'pay' }, { 'payment-required': 'abc' });
    if (decision.kind !== 'respond') throw new Error('respondJson answers');
    const response = responseOf(decision);
    expect(response.status).toBe(402);
    expect(response.headers.get('payment-required')).toBe('abc');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ detail: 'pay' });
  });
});
