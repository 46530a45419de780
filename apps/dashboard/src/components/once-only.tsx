import { useState } from 'preact/hooks';
import { useDialogFocus } from '../use-dialog-focus';

export interface OnceOnlyValue {
  label: string;
  value: string;
  /** Where it goes, e.g. "CRAWLGATE_SITE_TOKEN in your middleware's environment". */
  hint?: string;
}

/**
 * Credentials the API returns once and stores only as a hash: shown in full with a copy button,
 * and kept on screen until the publisher says they are stored.
 */
export function OnceOnly({ title, values, onDone }: { title: string; values: OnceOnlyValue[]; onDone(): void }) {
  const [copied, setCopied] = useState<{ label: string; ok: boolean } | null>(null);
  // No Escape: the values cannot be shown again, so only an explicit "stored" closes it.
  const box = useDialogFocus<HTMLElement>();
  // Only a copy that worked says so: without a clipboard (plain http off localhost) the text must be copied by hand.
  const copy = async (item: OnceOnlyValue) => {
    const ok = await (navigator.clipboard?.writeText(item.value).then(
      () => true,
      () => false,
    ) ?? Promise.resolve(false));
    setCopied({ label: item.label, ok });
  };
  return (
    <section class="once-only" aria-label={title} ref={box}>
      <h3>{title}</h3>
      <p class="warning">
        <strong>Shown once.</strong> Crawlgate keeps only a hash or an encrypted copy: store these now, they cannot be
        shown again.
      </p>
      <dl>
        {values.map((item) => (
          <div key={item.label}>
            <dt>{item.label}</dt>
            <dd>
              <code data-secret={item.label}>{item.value}</code>
              <button type="button" class="small" onClick={() => void copy(item)}>
                {copied?.label === item.label && copied.ok ? 'Copied' : 'Copy'}
              </button>
              {copied?.label === item.label && !copied.ok && (
                <small class="error" role="alert">
                  Copying is not available here: select the value and copy it by hand.
                </small>
              )}
              {item.hint && <small>{item.hint}</small>}
            </dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={onDone}>
        I have stored them
      </button>
    </section>
  );
}
