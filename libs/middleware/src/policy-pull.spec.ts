/*
 * The policy and pricing pull (GET /v1/site), as an attacker would try it (helper-347): terms that
 * belong to another site never decide what this site's gate serves, and a stored policy not read
 * yet is never stood in for by one that serves a bot free which the stored one charges or blocks.
 */

import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../testing/fake-api';
import { createCrawlgate, type CrawlgateOptions } from './crawlgate';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
// Bytespider publishes no ranges and does not sign: whoever sends its User-Agent is taken for it.
const BYTESPIDER =
  'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko; compatible; Bytespider; spider-feedback@bytedance.com)';
const OTHER_SITE_ID = '22222222-2222-4222-8222-222222222222';

const gates: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
});

function setup(options: Partial<CrawlgateOptions> = {}) {
  const api = fakeApi();
  const warnings: string[] = [];
  const gate = createCrawlgate({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_token_of_another_site',
    secret: 'secret-of-this-site',
    fetch: api.fetch,
    logger: { warn: (message) => warnings.push(message) },
    crawlerIps: false,
    ...options,
  });
  gates.push(gate);
  const status = async (url: string, ua = GPTBOT) => {
    const decision = await gate.handle({ method: 'GET', url, headers: { 'user-agent': ua }, ip: '10.0.0.1' });
    return decision.kind === 'respond' ? decision.status : 200;
  };
  return { api, warnings, gate, status };
}

describe('terms of another site (GET /v1/site answering for a site that is not options.siteId)', () => {
  // The site token configured is another site's (the publisher's staging site, a copy-paste from
  // another deployment, a token swapped in a secret store): the API answers, truthfully, with THAT
  // site's terms. This site's id is options.siteId; its gate must not price or police by them.

  it('does not serve a bot this site must charge because the other site prices its pages at 0', async () => {
    const { api, status, warnings } = setup();
    // The other site is free (default 0, no rules); this gate's own site is the one configured by siteId.
    api.setSite({ site_id: OTHER_SITE_ID, default_price_usd: '0', rules: [] });
    // Taken, the other site's free pricing served GPTBot the page for nothing (200), with not a word in the log.
    expect(await status('/articles/1')).not.toBe(200);
    expect(warnings.some((warning) => warning.includes(OTHER_SITE_ID) || /another site/i.test(warning))).toBe(true);
  });

  it('does not serve a bot with failMode open either: the API answered, it is not out of reach', async () => {
    // Refused as unreadable, the other site's terms left none loaded, and failMode open served every bot (helper-349's F2).
    const { api, status, warnings } = setup({ failMode: 'open' });
    api.setSite({ site_id: OTHER_SITE_ID, default_price_usd: '0.05', rules: [] });
    expect(await status('/articles/1')).toBe(503);
    expect(warnings.some((warning) => warning.includes(`answers for site ${OTHER_SITE_ID}`))).toBe(true);
    expect(await status('/articles/1', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0')).toBe(200); // people pass
  });

  it('does not let the other site’s bot policy allow a bot the code leaves charged', async () => {
    const { api, status } = setup();
    api.setSite({
      site_id: OTHER_SITE_ID,
      bot_policy: {
        categories: { 'ai-training': 'allow' },
        bots: {},
        require_signature: { categories: [], bots: [] },
        version: 9,
      },
    } as never);
    expect(await status('/articles/1')).not.toBe(200);
  });
});

describe('before a stored policy is read: a category the code allows, a bot the store charges or blocks', () => {
  // Address checks on (the default): Bytespider has no ranges to check, so its User-Agent names it.
  // The documented precedence (stored-bot-policy.ts): "a bot the dashboard sets keeps its action
  // unless the code names that same bot, even where the code sets its category". So once the
  // stored policy is read, Bytespider blocked in the dashboard is blocked although the code allows
  // ai-training. Before it is read, the gate cannot know that entry: the code's category allow
  // must not stand in for it (it let Bytespider through free).
  const code: CrawlgateOptions['policy'] = { categories: { 'ai-training': 'allow' } };
  const storedBlock = {
    categories: {},
    bots: { Bytespider: 'block' },
    require_signature: { categories: [], bots: [] },
    version: 5,
  };

  it('the API down at start-up (failMode closed): Bytespider, blocked in the stored policy, is served', async () => {
    const { api, status } = setup({ siteToken: 'st_this_site', policy: code, refreshMs: 10, crawlerIps: undefined });
    let apiUp = false;
    api.answerWith((call) =>
      call === 'GET /v1/site' && !apiUp ? { status: 503, body: { detail: 'down' } } : undefined,
    );
    api.setSite({ bot_policy: storedBlock } as never);
    // It was 200: the page served free to a bot the site blocks, under the default failMode 'closed'.
    const whileDown = await status('/articles/1', BYTESPIDER);
    apiUp = true;
    for (let i = 0; i < 200 && (await status('/articles/1', BYTESPIDER)) !== 403; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    // Once the stored policy loads, Bytespider is blocked: what was served before was served against it.
    expect(await status('/articles/1', BYTESPIDER)).toBe(403);
    expect(whileDown).not.toBe(200);
  });

  it('a stored policy this middleware cannot read (a newer API’s format): Bytespider, charged there, is served unpaid', async () => {
    const { api, status } = setup({ siteToken: 'st_this_site', policy: code, crawlerIps: undefined });
    // The store charges Bytespider, in a shape this version cannot read (require_signature.categories as a word).
    api.setSite({
      bot_policy: {
        ...storedBlock,
        bots: { Bytespider: 'charge' },
        require_signature: { categories: 'all', bots: [] },
      },
    } as never);
    // It was 200, unpaid: the pricing loaded, so failMode does not apply, and the stand-in allowed Bytespider outright.
    expect(await status('/articles/1', BYTESPIDER)).not.toBe(200);
  });
});
