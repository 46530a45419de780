import { useEffect, useState } from 'preact/hooks';
import type { Site, SiteChannelsView, SitePayment } from '@crawlgate/publisher';
import { terminalSafe } from '@crawlgate/core';
import { useSession } from '../api-context';
import { ErrorNote } from '../components/error-note';
import { OneSitePage } from '../components/one-site-page';
import { explorerTxUrl } from '../explorer';
import { formatUsd } from '../money';

const PAGE_SIZE = 50;

export function PaymentsPage({ sites, siteId }: { sites: Site[]; siteId: string | null }) {
  return (
    <OneSitePage page="payments" title="Payments" sites={sites} siteId={siteId}>
      {(site) => (
        <>
          <ChannelTotals key={`channels-${site.site_id}`} site={site} />
          <PaymentTable key={site.site_id} site={site} />
        </>
      )}
    </OneSitePage>
  );
}

/**
 * x402 batch-settlement vouchers are revenue once accepted, but the USDC reaches the payout address
 * only when the channels are claimed: the publisher sees both. Shown once the site takes vouchers
 * or has any.
 */
function ChannelTotals({ site }: { site: Site }) {
  const { client } = useSession();
  const [view, setView] = useState<SiteChannelsView>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    client.siteChannels(site.site_id).then(setView, setError);
  }, [site.site_id]);
  if (error) return <ErrorNote error={error} />;
  if (!view || (!site.batch_settlement && view.channels.length === 0)) return null;
  return (
    <section aria-label="Batch settlement">
      Batch settlement: <strong>{formatUsd(BigInt(view.claimed_amount))}</strong> claimed to your payout address,{' '}
      <strong>{formatUsd(BigInt(view.unclaimed_amount))}</strong> still in{' '}
      {view.channels.filter((channel) => channel.unclaimed_amount !== '0').length} payer channel(s), claimed in batches.
    </section>
  );
}

/** Newest first, a page at a time through the API's cursor. */
function PaymentTable({ site }: { site: Site }) {
  const { client } = useSession();
  const [items, setItems] = useState<SitePayment[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);

  const loadPage = async (after?: string) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await client.sitePayments(site.site_id, { limit: PAGE_SIZE, cursor: after });
      setItems((previous) => (after ? [...previous, ...page.items] : page.items));
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => void loadPage(), [site.site_id]);

  return (
    <>
      <ErrorNote error={error} />
      <table aria-label="Payments">
        <thead>
          <tr>
            <th>Paid at (UTC)</th>
            <th>Path</th>
            <th class="num">Amount</th>
            <th>Agent wallet</th>
            <th>Transaction</th>
          </tr>
        </thead>
        <tbody>
          {items.length === 0 && !loading && (
            <tr>
              <td colSpan={5} class="muted">
                No payments yet.
              </td>
            </tr>
          )}
          {items.map((payment) => {
            const link = explorerTxUrl(payment.network, payment.tx_hash);
            return (
              <tr key={payment.payment_id}>
                <td>{payment.paid_at.replace('T', ' ').slice(0, 19)}</td>
                <td>
                  <code>{terminalSafe(payment.url)}</code>
                </td>
                <td class="num">{formatUsd(BigInt(payment.amount))}</td>
                <td>
                  <code>{payment.payer}</code>
                </td>
                <td>
                  {payment.scheme === 'batch-settlement' ? (
                    <span title={payment.channel_id ?? ''}>voucher</span>
                  ) : link ? (
                    <a href={link} target="_blank" rel="noopener noreferrer">
                      {shortHash(payment.tx_hash!)}
                    </a>
                  ) : (
                    <code title={payment.tx_hash ?? ''}>{payment.tx_hash ? shortHash(payment.tx_hash) : '–'}</code>
                  )}
                  <span class="muted"> {payment.network}</span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div class="row">
        {cursor && (
          <button type="button" class="secondary" disabled={loading} onClick={() => void loadPage(cursor)}>
            Load older payments
          </button>
        )}
        {loading && <span class="muted">Loading…</span>}
      </div>
    </>
  );
}

function shortHash(hash: string): string {
  return `${hash.slice(0, 10)}…${hash.slice(-8)}`;
}
