import { pricedSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { SitePaymentTermsStore } from './site-payment-terms.store';

describe('site payment terms store', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  }, 60_000);
  afterAll(() => app?.close(), 60_000);

  it('reads the same columns as Prisma does, with their types, and null for a site that is not there', async () => {
    const payTo = newWallet().address;
    const { site, publisher } = await pricedSite(app, payTo);
    await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { batch_settlement: true }, headers: publisher.auth });
    const store = app.app.get(SitePaymentTermsStore);
    const read = await store.get(site.siteId);
    const prisma = await app.database.prisma.site.findUniqueOrThrow({
      where: { id: site.siteId },
      select: {
        id: true,
        publisherId: true,
        batchSettlement: true,
        pricingVersion: true,
        defaultPriceMicros: true,
        pricingUpdatedAt: true,
        secretsVersion: true,
        publisher: { select: { payoutAddress: true } },
      },
    });
    const { publisher: owner, ...columns } = prisma;
    expect(read).toEqual({ ...columns, payoutAddress: owner.payoutAddress });
    expect(read!.payoutAddress).toBe(payTo);
    expect(read).toMatchObject({ batchSettlement: true, defaultPriceMicros: 10_000n });
    expect(read!.pricingUpdatedAt).toBeInstanceOf(Date);
    expect(await store.get('00000000-0000-4000-8000-000000000000')).toBeNull();
  }, 60_000);
});
