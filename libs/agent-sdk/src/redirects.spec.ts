import { firstHop, follow } from './redirects';

/** A fetch answering each URL as `answers` says, recording the headers each request carried. */
function recordingFetch(answers: Record<string, () => Response>) {
  const sent: { url: string; headers: Headers }[] = [];
  const http = (async (input: string | URL, init: RequestInit = {}) => {
    const url = String(input);
    sent.push({ url, headers: new Headers(init.headers) });
    return answers[url]();
  }) as typeof fetch;
  return { http, sent };
}

describe('follow', () => {
  it('sends the payment to the first request only, and returns its answer beside the last', async () => {
    const { http, sent } = recordingFetch({
      'https://site.example/short': () =>
        new Response(null, { status: 302, headers: { location: '/full', 'x-crawlgate-token': 'bought' } }),
      'https://site.example/full': () => new Response('the page'),
    });
    const tokenFor = (url: URL): Record<string, string> =>
      url.href === 'https://site.example/full' ? { 'x-crawlgate-token': 'full-token' } : {};
    const followed = await follow(
      http,
      await firstHop('https://site.example/short'),
      { 'x-payment': 'paid' },
      tokenFor,
    );
    expect(sent.map(({ url, headers }) => [url, headers.get('x-payment'), headers.get('x-crawlgate-token')])).toEqual([
      ['https://site.example/short', 'paid', null],
      ['https://site.example/full', null, 'full-token'],
    ]);
    expect(followed.answer.status).toBe(302);
    expect(followed.answer.headers.get('x-crawlgate-token')).toBe('bought');
    expect(await followed.response.text()).toBe('the page');
    expect(followed.hop.url.href).toBe('https://site.example/full');
  });

  it('answers with the same response twice when nothing redirected', async () => {
    const { http } = recordingFetch({ 'https://site.example/page': () => new Response('the page') });
    const followed = await follow(http, await firstHop('https://site.example/page'), {}, () => ({}));
    expect(followed.answer).toBe(followed.response);
  });
});
