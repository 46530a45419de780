import type { SiteOffer } from '@crawlgate/core';
import type { ApiClient } from './api-client';
import { loadSiteTerms, MAX_TERMS_AGE_MS } from './site-terms';

const OFFER = {
  site_id: 's',
  domain: 'example.com',
  default_price_usd: '0.01',
  rules: [],
  pricing_version: 1,
} as Partial<SiteOffer> as SiteOffer;

/** An API that answers the first load, then is down. */
function downAfterFirstLoad(): ApiClient {
  let calls = 0;
  const site = async () => {
    if (calls++ > 0) throw new Error('the API is down');
    return OFFER;
  };
  return { site } as Partial<ApiClient> as ApiClient;
}

describe('loadSiteTerms', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());
  // A clock the test moves while no timer fires, as on an edge runtime.
  let now = 0;
  const clock = () => now;
  beforeEach(() => (now = 1_000));

  it('lapses terms no refresh replaced for MAX_TERMS_AGE_MS by the clock, where timers set earlier never fire', async () => {
    // On an edge runtime a timer set while answering a request may never fire once the answer is
    // sent: terms lapsing by a timer alone would be trusted for ever, a revoked secret and a price
    // raised since never seen.
    const api = downAfterFirstLoad();
    const terms = loadSiteTerms({ api, refreshMs: 30_000, siteId: 's', onError: () => undefined, clock });
    await terms.ready();
    expect(terms.current()?.offer).toBe(OFFER);
    now += MAX_TERMS_AGE_MS - 1_000; // the clock moves, no timer fires
    expect([terms.lapsed(), terms.current()?.offer]).toEqual([false, OFFER]);
    now += 2_000;
    expect([terms.lapsed(), terms.current()]).toEqual([true, undefined]);
    expect(terms.lastLoaded()?.offer).toBe(OFFER);
    terms.close();
  });

  it('loads again when a request finds no load for two refresh intervals, where timers never fire', async () => {
    // Lapsed terms stayed lapsed: every paying bot got 503 until the isolate restarted, the API up.
    let calls = 0;
    const api = {
      site: async () => {
        calls++;
        return OFFER;
      },
    } as Partial<ApiClient> as ApiClient;
    const terms = loadSiteTerms({ api, refreshMs: 30_000, siteId: 's', onError: () => undefined, clock });
    await terms.ready();
    now += MAX_TERMS_AGE_MS + 1_000; // the clock moves, no timer fires
    expect(terms.lapsed()).toBe(true); // this request finds them lapsed, and starts a load
    await Promise.resolve();
    await Promise.resolve();
    expect(calls).toBe(2);
    expect([terms.lapsed(), terms.current()?.offer]).toEqual([false, OFFER]);
    expect(calls).toBe(2); // one load at a time
    terms.close();
  });

  it('gives a load that never settles up for lost, and keeps no answer of it over a later one', async () => {
    // A runtime that drops a request's pending fetch once the answer is sent never settles it: a
    // load counted as running for ever kept every later one from starting.
    const answers: ((offer: SiteOffer) => void)[] = [];
    let calls = 0;
    const api = {
      site: () => {
        calls++;
        return calls === 1 ? Promise.resolve(OFFER) : new Promise<SiteOffer>((resolve) => answers.push(resolve));
      },
    } as Partial<ApiClient> as ApiClient;
    const terms = loadSiteTerms({ api, refreshMs: 30_000, siteId: 's', onError: () => undefined, clock });
    await terms.ready();
    now += 61_000;
    terms.lapsed(); // starts load 2, which never settles
    expect(calls).toBe(2);
    now += 61_000;
    terms.lapsed(); // load 2 still running, not yet given up
    expect(calls).toBe(2);
    now += 61_000;
    terms.lapsed(); // given up: load 3
    expect(calls).toBe(3);
    const newer = { ...OFFER, pricing_version: 3 } as SiteOffer;
    answers[1](newer);
    await Promise.resolve();
    await Promise.resolve();
    expect(terms.current()?.offer).toBe(newer);
    answers[0]({ ...OFFER, pricing_version: 2 } as SiteOffer); // the lost one, late: ignored
    await Promise.resolve();
    await Promise.resolve();
    expect(terms.current()?.offer).toBe(newer);
    terms.close();
  });

  it('lapses by a clock that never goes back: the wall clock stepped back an hour lengthens nothing', async () => {
    const api = downAfterFirstLoad();
    const terms = loadSiteTerms({ api, refreshMs: 30_000, siteId: 's', onError: () => undefined }); // performance.now()
    await terms.ready();
    jest.setSystemTime(Date.now() - 3_600_000);
    await jest.advanceTimersByTimeAsync(MAX_TERMS_AGE_MS + 1_000); // refreshes fail all along
    expect([terms.lapsed(), terms.current()]).toEqual([true, undefined]);
    terms.close();
  });

  it('trusts terms again once a refresh succeeds', async () => {
    const api = { site: async () => OFFER } as Partial<ApiClient> as ApiClient;
    const terms = loadSiteTerms({ api, refreshMs: 30_000, siteId: 's', onError: () => undefined, clock });
    await terms.ready();
    now += MAX_TERMS_AGE_MS + 1_000;
    expect(terms.lapsed()).toBe(true);
    await jest.advanceTimersByTimeAsync(30_000); // the refresh runs and loads
    expect([terms.lapsed(), terms.current()?.offer]).toEqual([false, OFFER]);
    terms.close();
  });
});
