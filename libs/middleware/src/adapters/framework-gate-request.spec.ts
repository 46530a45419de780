import { createCrawlgate } from '../crawlgate';
import type { ClientAddress } from './client-address';
import { FrameworkGateRequest } from './framework-gate-request';

describe('FrameworkGateRequest', () => {
  const headers = { 'user-agent': 'Mozilla/5.0' };

  it("reads the client's address only when asked, each time from the framework's request", () => {
    const source = { ip: '66.249.66.1', socket: { remoteAddress: '10.0.0.1' } };
    const addressOf = jest.fn<ReturnType<ClientAddress>, Parameters<ClientAddress>>((request) => request.ip);
    const request = new FrameworkGateRequest('GET', '/a?b=1', '/a', headers, source, addressOf);
    expect(addressOf).not.toHaveBeenCalled();
    expect(request.ip).toBe('66.249.66.1');
    source.ip = '66.249.66.2';
    expect(request.ip).toBe('66.249.66.2');
    expect(addressOf).toHaveBeenCalledTimes(2);
    expect(addressOf).toHaveBeenLastCalledWith(source);
  });

  it('shows the gate its fields, and keeps the framework request out of what is serialized', () => {
    const source: Record<string, unknown> = { ip: '192.0.2.1' };
    source.self = source; // frameworks' requests are circular
    const request = new FrameworkGateRequest('POST', '/p', undefined, headers, source, () => '192.0.2.1');
    expect(request).toMatchObject({ method: 'POST', url: '/p', routedUrl: undefined, headers, ip: '192.0.2.1' });
    expect(JSON.parse(JSON.stringify(request))).toEqual({ method: 'POST', url: '/p', headers });
  });

  it("is handed to the site's own isBot and clientIp as a plain object: its address survives a spread, a clone, a proxy", async () => {
    const seen: unknown[] = [];
    const gate = createCrawlgate({
      apiUrl: 'http://127.0.0.1:9',
      siteId: 'site',
      siteToken: 'st_x',
      secret: 'x'.repeat(32),
      logger: { warn: () => undefined },
      // A block list read from a copy of the request: the scraper's browser User-Agent must not free it.
      isBot: (request) => {
        const copy = { ...request };
        seen.push(copy.ip, JSON.parse(JSON.stringify(request)).ip, Object.create(request).ip);
        return copy.ip === '203.0.113.9' ? true : undefined;
      },
      crawlerIps: { clientIp: (request) => new Proxy(request, {}).ip },
    });
    try {
      const request = new FrameworkGateRequest('GET', '/a', '/a', headers, {}, () => '203.0.113.9');
      const decision = await gate.handle(request);
      expect(seen).toEqual(['203.0.113.9', '203.0.113.9', '203.0.113.9']);
      expect(decision.kind).not.toBe('pass');
    } finally {
      await gate.close();
    }
  });

  it('is read by the gate as a request: a crawler by its address, with the address read once it is one', async () => {
    const addressOf = jest.fn<ReturnType<ClientAddress>, Parameters<ClientAddress>>(() => '203.0.113.9');
    const gate = createCrawlgate({
      apiUrl: 'http://127.0.0.1:9',
      siteId: 'site',
      siteToken: 'st_x',
      secret: 'x'.repeat(32),
      isBot: (request) => request.ip === '203.0.113.9',
      logger: { warn: () => undefined },
    });
    try {
      const decision = await gate.handle(new FrameworkGateRequest('GET', '/a', '/a', headers, {}, addressOf));
      expect(addressOf).toHaveBeenCalled();
      expect(decision.kind).not.toBe('pass');
    } finally {
      await gate.close();
    }
  });
});
