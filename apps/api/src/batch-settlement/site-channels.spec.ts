import { siteChannelsView, type SiteChannelRow } from './site-channels';

const row = (i: number, claimed: string, unclaimed: string): SiteChannelRow => ({
  channel_id: `0x${i.toString(16).padStart(64, '0')}`,
  payer: '0x52908400098527886e0f7030069857d2e4169ee7',
  claimed,
  unclaimed,
  last_voucher_at: new Date(Date.UTC(2026, 10, 23, 12, 0, i % 60)),
});

describe('siteChannelsView', () => {
  it('adds up every channel, in micro-USD, and shows the payer checksummed', () => {
    const view = siteChannelsView('site', [row(1, '40000', '10000'), row(2, '0', '2500'), row(3, '1', '0')]);
    expect(view).toMatchObject({
      site_id: 'site',
      claimed_amount: '40001',
      claimed_usd: '0.040001',
      unclaimed_amount: '12500',
      unclaimed_usd: '0.0125',
    });
    expect(view.channels[0]).toEqual({
      channel_id: row(1, '', '').channel_id,
      payer: '0x52908400098527886E0F7030069857D2E4169EE7',
      claimed_amount: '40000',
      unclaimed_amount: '10000',
      last_voucher_at: '2026-11-23T12:00:01.000Z',
    });
  });

  it('lists at most 100 channels but counts them all, beyond what a float could hold', () => {
    const rows = Array.from({ length: 150 }, (_, i) => row(i, '0', '90071992547409930'));
    const view = siteChannelsView('site', rows);
    expect(view.channels).toHaveLength(100);
    expect(view.unclaimed_amount).toBe((90071992547409930n * 150n).toString());
  });

  it('is all zeros for a site without vouchers', () => {
    expect(siteChannelsView('site', [])).toEqual({
      site_id: 'site',
      claimed_amount: '0',
      claimed_usd: '0',
      unclaimed_amount: '0',
      unclaimed_usd: '0',
      channels: [],
    });
  });
});
