import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keepPaidAnswerHeaders } from './paid-answer';

const PAID = { 'cache-control': 'no-store', 'x-crawlgate-token': 'tok', 'crawler-charged': 'USD 0.01' };
const CDN = 'public, max-age=600';

/** A real server whose route answers after the gate's headers were kept, the way `route` writes them. */
async function answerOf(route: (response: ServerResponse) => void) {
  const server = createServer((_request, response) => {
    for (const [name, value] of Object.entries(PAID)) response.setHeader(name, value);
    keepPaidAnswerHeaders(response, PAID);
    route(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { redirect: 'manual' });
    return { status: answer.status, headers: answer.headers, text: await answer.text() };
  } finally {
    server.close();
  }
}

describe('keepPaidAnswerHeaders', () => {
  it.each([
    ['setHeader, then end()', (r: ServerResponse) => r.setHeader('Cache-Control', CDN) && r.end('page')],
    ['writeHead with an object', (r: ServerResponse) => r.writeHead(200, { 'Cache-Control': CDN }).end('page')],
    [
      'writeHead with a status message and an object',
      (r: ServerResponse) => r.writeHead(200, 'OK', { 'cache-control': CDN }).end('page'),
    ],
    ['writeHead with a flat array', (r: ServerResponse) => r.writeHead(200, ['Cache-Control', CDN]).end('page')],
    ['a write before end()', (r: ServerResponse) => (r.setHeader('cache-control', CDN), r.write('pa'), r.end('ge'))],
    [
      'writeHead with an object and an undefined third argument',
      // As a forwarding wrapper of fixed arity passes it on: Node takes the second argument as the headers.
      (r: ServerResponse) =>
        (r.writeHead as (...args: unknown[]) => ServerResponse)
          .call(r, 200, { 'cache-control': CDN }, undefined)
          .end('page'),
    ],
    [
      'a wrapper of fixed arity installed after the gate',
      (r: ServerResponse) => {
        const inner = r.writeHead;
        r.writeHead = function (this: ServerResponse, status: number, message?: unknown, headers?: unknown) {
          return (inner as (...args: unknown[]) => ServerResponse).call(this, status, message, headers);
        } as ServerResponse['writeHead'];
        r.setHeader('cache-control', CDN);
        r.end('page');
      },
    ],
    [
      'its own token header and receipt',
      (r: ServerResponse) => r.writeHead(200, { 'X-Crawlgate-Token': 'other', 'crawler-charged': 'USD 0' }).end('page'),
    ],
  ])("sends the gate's headers over the route's: %s", async (_name, route) => {
    const answer = await answerOf(route);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('page');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('x-crawlgate-token')).toBe('tok');
    expect(answer.headers.get('crawler-charged')).toBe('USD 0.01');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
  ])("keeps the route's headers given after a message that is %s, as Node reads them", async (_name, message) => {
    const answer = await answerOf((r) =>
      (r.writeHead as (...args: unknown[]) => ServerResponse)
        .call(r, 302, message, { location: '/login', 'content-type': 'text/plain', 'cache-control': CDN })
        .end('page'),
    );
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/login');
    expect(answer.headers.get('content-type')).toBe('text/plain');
    expect(answer.headers.get('cache-control')).toBe('no-store');
  });

  it('takes the third argument over the second when both are headers, as Node does', async () => {
    const answer = await answerOf((r) =>
      (r.writeHead as (...args: unknown[]) => ServerResponse)
        .call(r, 200, { 'content-type': 'text/a' }, { 'content-type': 'text/b' })
        .end('page'),
    );
    expect(answer.headers.get('content-type')).toBe('text/b');
  });

  it("keeps the route's other headers and status", async () => {
    const answer = await answerOf((r) => r.writeHead(404, { 'content-type': 'text/plain', 'x-page': '1' }).end('gone'));
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toBe('text/plain');
    expect(answer.headers.get('x-page')).toBe('1');
    expect(answer.headers.get('cache-control')).toBe('no-store');
  });
});
