import { GPTBOT } from '../middleware/support/gated-site';
import { fundedAgent } from './support/funded-agent';
import { startLoggedSite, type LoggedSite } from './support/logged-site';

/*
 * payAhead and a page that redirects in front of the gate (a canonical or trailing-slash redirect
 * of the site's own, nginx, a CDN): the voucher sent ahead goes to the redirecting URL, whose answer
 * carries no settlement, and the target answers 402. The page is then fetched again, asked for
 * first, and the page the redirect led to is paid, as without payAhead (an attacker's review found
 * the caller getting the target's 402, unpaid).
 */
const asBot = { headers: { 'user-agent': GPTBOT } };

describe('payAhead and a redirect in front of the gate', () => {
  let site: LoggedSite;
  beforeAll(async () => {
    site = await startLoggedSite({
      before: (app) => app.get('/old/:id', (req, res) => void res.redirect(301, `/articles/${req.params.id}`)),
    });
  }, 60_000);
  afterAll(() => site?.close());

  for (const payAhead of [false, true])
    it(`payAhead ${payAhead}: the page a redirect leads to is paid and served`, async () => {
      const { agent } = await fundedAgent(site.gated.app, {
        budgetUsd: '0.5',
        batchSettlement: { depositUsd: '0.2', payAhead },
      });
      const id = Math.random().toString(36).slice(2);
      expect((await agent.fetch(`${site.url}/articles/first-${id}`, asBot)).status).toBe(200);
      const answers = [];
      for (let i = 0; i < 2; i++) {
        const response = await agent.fetch(`${site.url}/old/moved-${id}`, asBot);
        answers.push([response.status, await response.text()]);
      }
      expect(answers).toEqual([
        [200, `content of /articles/moved-${id}`],
        [200, `content of /articles/moved-${id}`],
      ]);
    });
});
