import { siteAtPrice, type TestSite } from '../../test/fixtures';
import { newWallet, paymentsOfOnePayer, usdcBalance } from '../../test/test-agent';
import { startProxiedTestApp, type ProxiedTestApp } from '../../test/proxied-test-app';
import type { TestApp } from '../../test/test-app';

// Statements must arrive late at a server, so this file runs on PostgreSQL even on a PGlite run.
/** Longest a held statement or broadcast waits for what it waits for. */
const HOLD_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Two payments of one payer holding enough for one, where the first claim written reaches the
 * database late: the second is claimed and checked meanwhile, and its broadcast is held until the
 * first was checked too, so neither balance read sees the other's transfer. Whatever order the
 * claims land in, one of the two must see the other in flight, so the relayer broadcasts exactly
 * one settlement (issue 12: no gas for doomed settlements). Claims ordered by their creation time
 * let each see the other as behind it, and both were broadcast (CI on PostgreSQL caught it once by
 * chance; this forces it).
 */
describe('claims of one payer reaching the database out of order', () => {
  let proxied: ProxiedTestApp;
  let app: TestApp;
  let dear: TestSite;
  const payTo = newWallet().address;

  beforeAll(async () => {
    proxied = await startProxiedTestApp();
    app = proxied.app;
    dear = await siteAtPrice(app, payTo, '0.5');
  });
  afterAll(() => proxied.close());

  it('broadcasts one settlement when the first claim written is held back until the second was checked', async () => {
    const { agent, verify, relayerSent } = await paymentsOfOnePayer(app, dear, '0.5', ['/late/0', '/late/1']);

    // The first claim written waits until the other's read of the claims ahead of it went out (or
    // HOLD_MS: a claim serialized behind the held one never reads meanwhile).
    let releaseClaim!: () => void;
    const claimReleased = new Promise<void>((resolve) => (releaseClaim = resolve));
    let claimsHeld = 0;
    proxied.onStatement((sql) => {
      if (claimsHeld === 0 && /INSERT INTO (?:"[^"]+"\.)?"?payments"?\s/.test(sql)) {
        claimsHeld++;
        setTimeout(releaseClaim, HOLD_MS);
        return claimReleased;
      }
      if (claimsHeld === 1 && /FROM (?:"[^"]+"\.)?"?payments"?\s+WHERE/.test(sql)) setTimeout(releaseClaim, 50);
    });
    // The first broadcast waits until the held claim had time to read the payer's balance.
    let broadcastsHeld = 0;
    proxied.onRpc((text) => {
      if (broadcastsHeld > 0 || !text.includes('eth_sendRawTransaction')) return;
      broadcastsHeld++;
      return claimReleased.then(() => sleep(300));
    });
    const answers = await Promise.all([verify(0), verify(1)]);

    proxied.onStatement(undefined);
    proxied.onRpc(undefined);
    expect(claimsHeld).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    expect(answers.find((a) => a.status === 402)!.body.reason).toBe('insufficient_funds');
    expect(await relayerSent()).toBe(1);
    expect(await usdcBalance(app, agent.address)).toBe(0n);
    expect(await app.database.prisma.payment.count({ where: { payer: agent.address.toLowerCase() } })).toBe(1);
  }, 20_000);
});
