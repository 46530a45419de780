import { PublisherClient } from './client';

/** A client whose transport records each URL it is asked for, and answers 200 {}. */
function recordingClient() {
  const urls: string[] = [];
  const client = new PublisherClient({
    apiUrl: 'http://127.0.0.1:9',
    apiKey: 'xk_pub_test',
    fetch: async (input) => {
      urls.push(String(input));
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, urls };
}

describe('PublisherClient paths', () => {
  it.each(['.', '..', ''])('refuses %j as a site id or crawler name: the URL would name another route', (value) => {
    const { client, urls } = recordingClient();
    expect(() => client.getSite(value)).toThrow(RangeError);
    expect(() => client.deleteSite(value)).toThrow(RangeError);
    expect(() => client.setBotAction('site-1', value, 'allow')).toThrow(RangeError);
    expect(() => client.removeBotAction('site-1', value)).toThrow(RangeError);
    expect(urls).toEqual([]);
  });

  it('keeps any other value inside its one segment', async () => {
    const { client, urls } = recordingClient();
    await client.setBotAction('site-1', '../../publishers/me', 'allow');
    await client.removeBotAction('site-1', '%2E%2E');
    await client.getSite('a.b');
    expect(urls).toEqual([
      'http://127.0.0.1:9/v1/sites/site-1/bot-policy/bots/..%2F..%2Fpublishers%2Fme',
      'http://127.0.0.1:9/v1/sites/site-1/bot-policy/bots/%252E%252E',
      'http://127.0.0.1:9/v1/sites/a.b',
    ]);
  });
});

describe('PublisherClient over plain http', () => {
  const answering = async () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });

  it.each(['http://api.example.com', 'http://10.0.0.5:3000', 'http://127.0.0.1.example.com'])(
    'refuses %s off loopback: the password and the key would cross the network in clear',
    (apiUrl) => {
      const sent: string[] = [];
      const create = () =>
        new PublisherClient({ apiUrl, apiKey: 'xk_pub_test', fetch: async (url) => (sent.push(url), answering()) });
      expect(create).toThrow(TypeError);
      expect(create).toThrow(/plain http.*allowPlainHttp/);
      expect(create).not.toThrow(/xk_pub_test/);
      expect(sent).toEqual([]);
    },
  );

  it('takes https, plain http on loopback, and plain http off loopback when allowed', async () => {
    for (const apiUrl of ['https://api.example.com', 'http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9'])
      await expect(new PublisherClient({ apiUrl, apiKey: 'xk_pub_test', fetch: answering }).me()).resolves.toEqual({});
    const allowed = new PublisherClient({
      apiUrl: 'http://10.0.0.5:3000',
      apiKey: 'xk_pub_test',
      allowPlainHttp: true,
      fetch: answering,
    });
    await expect(allowed.me()).resolves.toEqual({});
  });
});

describe('PublisherClient options', () => {
  it.each([
    ['maxRetries', Number.NaN],
    ['maxRetries', -1],
    ['maxRetries', 11],
    ['maxRetries', 1.5],
    ['timeoutMs', 0],
    ['timeoutMs', 3_000_000_000],
    ['timeoutMs', Number.POSITIVE_INFINITY],
    ['maxRetryWaitMs', -1],
    ['maxRetryWaitMs', Number.NaN],
  ])('refuses %s %p: NaN retries for ever, a timer past 2^31 ms fires at once', (name, value) => {
    const create = () => new PublisherClient({ apiUrl: 'http://127.0.0.1:9', [name]: value });
    expect(create).toThrow(TypeError);
    expect(create).toThrow(new RegExp(`${name} must be a whole number`));
  });

  it('takes the bounds themselves', () => {
    expect(
      () =>
        new PublisherClient({ apiUrl: 'http://127.0.0.1:9', maxRetries: 0, timeoutMs: 2 ** 31 - 1, maxRetryWaitMs: 0 }),
    ).not.toThrow();
  });
});
