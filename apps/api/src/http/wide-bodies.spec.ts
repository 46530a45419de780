/*
 * Bodies wide rather than deep, within the size limit: class-transformer removes duplicate field
 * names in time quadratic in an object's fields (32,000 of them took half a second of the event
 * loop, on a route anyone reaches with made-up gate ids), and a list past its DTO's bound was still
 * transformed and validated item by item, then answered with an item per failing field (87,000
 * empty objects: 4 s and a 77 MB answer). Refused before any of that, with the place and the bound.
 */

import { registerPublisher, createSite, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { MAX_JSON_ITEMS, MAX_JSON_KEYS } from './json-depth';

describe('wide request bodies', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    publisher = await registerPublisher(app);
    site = await createSite(app, publisher);
  });
  afterAll(() => app.close());

  const wide = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 1]));

  it('refuses an object of more fields than any body has before reading it, on a route anyone reaches', async () => {
    const answer = await app.call('POST', `/v1/gates/${'a'.repeat(40)}/verify`, {
      body: { payment: wide(20_000) },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'payment'], type: 'too_long', ctx: { max_length: MAX_JSON_KEYS } }),
    ]);
  });

  it('refuses a list longer than any the API takes before reading an item, in a short answer', async () => {
    const answer = await app.call('POST', '/v1/site/gate-counts', {
      body: { counts: [], crawlers: Array.from({ length: 50_000 }, () => ({})) },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'crawlers'], type: 'too_long', ctx: { max_length: MAX_JSON_ITEMS } }),
    ]);
    expect(JSON.stringify(answer.body).length).toBeLessThan(16_384);
  });

  it('answers at most 20 problems, saying how many more there were, and shows no long list as an input', async () => {
    const rules = Array.from({ length: 500 }, () => ({ path: 'no-slash', price_usd: 'free' }));
    const answer = await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
      body: { default_price_usd: [...Array(100).keys()], rules },
      headers: publisher.auth,
    });
    expect(answer.status).toBe(422);
    const items = answer.body.detail as { loc: unknown[]; msg: string; input?: unknown }[];
    expect(items).toHaveLength(21);
    expect(items[20]).toMatchObject({
      loc: ['body'],
      type: 'too_many_errors',
      msg: expect.stringMatching(/^\d+ more problems/),
    });
    expect(items.find((item) => item.loc.join('.') === 'body.default_price_usd')).not.toHaveProperty('input');
    expect(JSON.stringify(answer.body).length).toBeLessThan(16_384);
  });
});
