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
