import { useState } from 'preact/hooks';
import type { Site } from '@crawlgate/publisher';
import { useSession } from '../api-context';
import { csvFileName } from '../crawlers-data';
import { downloadText } from '../download';
import { ErrorNote } from './error-note';

/** The CSV needs the API key, which the client sends in a header: fetched here, saved from a Blob. */
export function CsvDownload({ site, range }: { site: Site; range: { from: string; to: string } }) {
  const { client } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const download = async () => {
    setBusy(true);
    setError(undefined);
    try {
      downloadText(await client.siteCrawlersCsv(site.site_id, range), csvFileName(site.domain, range), 'text/csv');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="secondary" disabled={busy} onClick={() => void download()}>
        {busy ? 'Preparing CSV…' : 'Download CSV'}
      </button>
      <ErrorNote error={error} />
    </>
  );
}
