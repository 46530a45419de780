/*
 * fetchPage against a stub site: what it reports of answers that need no payment (paying a real
 * gated site is test/mcp-server.spec.ts).
 */

import { readConfig } from '../config';
import { createWalletSession } from '../session';
import { fetchPage } from './fetch-page';

const ENV = { CRAWLGATE_WALLET_KEY: `0x${'1'.repeat(64)}`, CRAWLGATE_MAX_PRICE_USD: '0.01', CRAWLGATE_BUDGET_USD: '1' };

function sessionFor(site: (url: string, init?: RequestInit) => Response) {
  // A real fetch's response knows its URL; a constructed one does not, so the stub sets it.
  const answer = (url: string, init?: RequestInit) => Object.defineProperty(site(url, init), 'url', { value: url });
  return createWalletSession(readConfig(ENV), {
    fetch: (async (input: string | URL, init?: RequestInit) => answer(String(input), init)) as typeof fetch,
  });
}

describe('fetchPage', () => {
  it('reads a page that asks nothing, as a crawler that says so', async () => {
    let userAgent: string | null = null;
    const session = sessionFor((_url, init) => {
      userAgent = new Headers(init?.headers).get('user-agent');
      return new Response('<p>hello</p>', { headers: { 'content-type': 'text/html' } });
    });
    expect(await fetchPage(session, new URL('https://a.example/p'), 100)).toEqual({
      url: 'https://a.example/p',
      status: 200,
      content_type: 'text/html',
      text: '<p>hello</p>',
      truncated: false,
      body_error: null,
      payment_unconfirmed: null,
      paid: null,
      spent_usd: '0',
      remaining_usd: '1',
    });
    expect(userAgent).toBe(session.headers['user-agent']);
  });

  it('reports an error status as the page answered it, not as a refusal', async () => {
    const session = sessionFor(() => new Response('gone', { status: 410, headers: { 'content-type': 'text/plain' } }));
    expect(await fetchPage(session, new URL('https://a.example/p'), 100)).toMatchObject({ status: 410, text: 'gone' });
  });

  it('follows redirects and reports where it ended', async () => {
    const session = sessionFor((url) =>
      url.endsWith('/old')
        ? new Response(null, { status: 301, headers: { location: '/new' } })
        : new Response('new', { headers: { 'content-type': 'text/plain' } }),
    );
    expect(await fetchPage(session, new URL('https://a.example/old'), 100)).toMatchObject({
      url: 'https://a.example/new',
      status: 200,
      text: 'new',
    });
  });

  it('does not show a binary body', async () => {
    const session = sessionFor(
      () => new Response(new Uint8Array([0x25, 0x50, 0x44, 0x46]), { headers: { 'content-type': 'application/pdf' } }),
    );
    expect(await fetchPage(session, new URL('https://a.example/doc.pdf'), 100)).toMatchObject({
      status: 200,
      content_type: 'application/pdf',
      text: null,
      truncated: false,
    });
  });
});
