import { GPTBOT } from '../middleware/support/gated-site';
import { rawRequest } from '../middleware/support/raw-request';
import { fundedAgent } from './support/funded-agent';
import { startLoggedSite, type LoggedSite } from './support/logged-site';

/*
 * A voucher taken for /cheap/x (0.001) is answered by the API through any gate of /cheap/x while
 * its token lives (its resend may name no gate). The middleware pays a payment presented on a
 * target a router may read as another page (a dot segment, "//", an encoded dot) through a fresh
 * gate bound to that target, of the same path: such a target is served only with a token of a gate
 * offered on it, never with the old voucher's token (an attacker's review found it served, unpaid).
 */
const asBot = { headers: { 'user-agent': GPTBOT } };

describe('a voucher paid for a cheap page, replayed on odd spellings of that page', () => {
  let site: LoggedSite;
  beforeAll(async () => {
    site = await startLoggedSite();
  }, 60_000);
  afterAll(() => site?.close());

  it('is never served on a target its router reads as another page', async () => {
    const { agent } = await fundedAgent(site.gated.app, { budgetUsd: '0.5', batchSettlement: { depositUsd: '0.2' } });
    const cheap = `/cheap/odd-${Math.random().toString(36).slice(2)}`;
    expect((await agent.fetch(`${site.url}${cheap}`, asBot)).status).toBe(200);
    const header = site.of(cheap).find((request) => request.payment)?.payment;
    expect(header).toBeDefined();
    const [channel] = agent.channels();
    expect(channel.charged).toBe(1_000n);

    const answers = [];
    for (const odd of [`/articles/secret/../..${cheap}`, `/articles/x/%2e%2e/..${cheap}`, `/${cheap}`]) {
      const answer = await rawRequest(site, odd, { 'user-agent': GPTBOT, 'payment-signature': header! });
      answers.push({ odd, status: answer.status, served: answer.text.startsWith('content of') });
    }
    // Each target-bound gate must be paid, at the site's highest price.
    expect(answers).toEqual(answers.map(({ odd }) => ({ odd, status: 402, served: false })));
  });
});
