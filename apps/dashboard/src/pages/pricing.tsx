import { useEffect, useState } from 'preact/hooks';
import type { Site } from '@crawlgate/publisher';
import { useSession } from '../api-context';
import { ErrorNote } from '../components/error-note';
import { FieldError, FormErrors } from '../components/form-errors';
import { OneSitePage } from '../components/one-site-page';
import {
  addRule,
  draftFromPricing,
  moveRule,
  previewPath,
  pricingInput,
  removeRule,
  updateRule,
  type PricingDraft,
} from '../pricing-draft';
import { useFormSubmit } from '../use-form-submit';
import { useLoad } from '../use-load';

export function PricingPage({ sites, siteId, onChanged }: { sites: Site[]; siteId: string | null; onChanged(): void }) {
  return (
    <OneSitePage page="pricing" title="Pricing" sites={sites} siteId={siteId}>
      {(site) => <PricingEditor key={site.site_id} site={site} onSaved={onChanged} />}
    </OneSitePage>
  );
}

function PricingEditor({ site, onSaved }: { site: Site; onSaved(): void }) {
  const { client } = useSession();
  const saved = useLoad(() => client.getPricing(site.site_id), [client, site.site_id]);
  const [draft, setDraft] = useState<PricingDraft | null>(null);
  const form = useFormSubmit();
  const [status, setStatus] = useState<string | null>(null);
  const [testPath, setTestPath] = useState('/');

  useEffect(() => {
    if (saved.data) setDraft(draftFromPricing(saved.data));
  }, [saved.data]);

  if (!draft) return <>{saved.loading ? <p class="muted">Loading…</p> : <ErrorNote error={saved.error} />}</>;

  const edit = (next: PricingDraft) => {
    setDraft(next);
    setStatus(null);
  };
  const save = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return form.run(async () => {
      const applied = await client.setPricing(site.site_id, pricingInput(draft));
      setStatus(
        `Saved: default price and ${applied.rules_applied} rule${applied.rules_applied === 1 ? '' : 's'} are live.`,
      );
      onSaved();
    });
  };
  const errors = form.fields;
  const preview = previewPath(draft, testPath || '/');
  const ruleError = (index: number, field: 'path' | 'price_usd') =>
    errors.byField[`rules.${index}.${field}`] ?? (field === 'path' ? errors.byField[`rules.${index}`] : undefined);

  return (
    <form onSubmit={(event) => void save(event)} aria-label="Pricing editor" class="pricing">
      <label>
        Default price (USD per request)
        <input
          name="default_price_usd"
          value={draft.defaultPrice}
          inputMode="decimal"
          onInput={(e) => edit({ ...draft, defaultPrice: (e.target as HTMLInputElement).value })}
          aria-invalid={Boolean(errors.byField.default_price_usd)}
        />
        <FieldError form={form} field="default_price_usd" />
      </label>
      <p class="muted">
        Rules are tried top to bottom; the first whose pattern matches the path sets the price. <code>*</code> matches
        within one path segment, <code>?</code> one character, <code>[…]</code> a class; <code>**</code> is not
        supported. A price of 0 makes a path free.
      </p>
      <ol class="rules" aria-label="Rules">
        {draft.rules.map((rule, index) => (
          <li key={rule.key} data-rule={index}>
            <span class="rule-number">{index + 1}</span>
            <label>
              Pattern
              <input
                name={`rules.${index}.path`}
                value={rule.path}
                onInput={(e) => edit(updateRule(draft, index, { path: (e.target as HTMLInputElement).value }))}
                aria-invalid={Boolean(ruleError(index, 'path'))}
              />
              {ruleError(index, 'path') && (
                <span class="field-error" data-field={`rules.${index}.path`}>
                  {ruleError(index, 'path')}
                </span>
              )}
            </label>
            <label>
              Price (USD)
              <input
                name={`rules.${index}.price_usd`}
                value={rule.price}
                inputMode="decimal"
                onInput={(e) => edit(updateRule(draft, index, { price: (e.target as HTMLInputElement).value }))}
                aria-invalid={Boolean(ruleError(index, 'price_usd'))}
              />
              {ruleError(index, 'price_usd') && (
                <span class="field-error" data-field={`rules.${index}.price_usd`}>
                  {ruleError(index, 'price_usd')}
                </span>
              )}
            </label>
            <span class="rule-buttons">
              <button
                type="button"
                class="small secondary"
                aria-label={`Move rule ${index + 1} up`}
                disabled={index === 0}
                onClick={() => edit(moveRule(draft, index, -1))}
              >
                ↑
              </button>
              <button
                type="button"
                class="small secondary"
                aria-label={`Move rule ${index + 1} down`}
                disabled={index === draft.rules.length - 1}
                onClick={() => edit(moveRule(draft, index, 1))}
              >
                ↓
              </button>
              <button
                type="button"
                class="small danger"
                aria-label={`Remove rule ${index + 1}`}
                onClick={() => edit(removeRule(draft, index))}
              >
                ✕
              </button>
            </span>
          </li>
        ))}
      </ol>
      <FieldError form={form} field="rules" />
      <div class="row">
        <button type="button" class="secondary" onClick={() => edit(addRule(draft))}>
          Add rule
        </button>
        <button type="submit" disabled={form.busy}>
          Save pricing
        </button>
        {status && (
          <span class="ok" role="status">
            {status}
          </span>
        )}
      </div>
      <FormErrors form={form} />

      <fieldset class="panel" aria-label="Test a path">
        <legend>Test a path</legend>
        <label>
          Path or URL
          <input
            name="test-path"
            value={testPath}
            onInput={(e) => setTestPath((e.target as HTMLInputElement).value)}
            placeholder="/blog/some-post?ref=x"
          />
        </label>
        <p data-testid="path-result" role="status">
          {preview.ok ? (
            <>
              <code>{preview.path}</code> costs <strong>${preview.priceUsd}</strong>{' '}
              {preview.rule === null ? (
                'by the default price'
              ) : (
                <>
                  by rule {preview.rule + 1} (<code>{preview.pattern}</code>)
                </>
              )}
              {preview.priceUsd === '0' && ' — free'}.
            </>
          ) : (
            <span class="error">{preview.problem}</span>
          )}
        </p>
        <small class="muted">Computed from the rules above, saved or not, with the same matcher the API uses.</small>
      </fieldset>
    </form>
  );
}
