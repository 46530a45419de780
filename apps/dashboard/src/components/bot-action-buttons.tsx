import { BOT_ACTIONS, type BotAction } from '@crawlgate/core';
import { allowNote, describeSource, effectiveAction, groupNote, noActionNote } from '../bot-actions';
import type { CrawlerRow } from '../crawlers-data';
import type { BotPolicyState } from '../use-bot-policy';
import { errorMessage } from './error-note';

const ACTION_LABELS: Record<BotAction, string> = { allow: 'Allow', charge: 'Charge', block: 'Block' };

/** One click sets the crawler's own action; the stored policy's answer is what shows. */
export function BotActionButtons({ row, policy }: { row: CrawlerRow; policy: BotPolicyState }) {
  const effective = policy.policy && effectiveAction(row, policy.policy);
  if (!effective) return <span class="muted">{noActionNote(row.crawler)}</span>;
  const saving = policy.saving.has(row.crawler);
  const error = policy.errors.get(row.crawler);
  return (
    <div class="bot-action" aria-busy={saving}>
      <div class="segmented" role="group" aria-label={`Action for ${row.crawler}`}>
        {BOT_ACTIONS.map((action) => (
          <button
            key={action}
            type="button"
            class={`small ${effective.action === action ? `chosen ${action}` : 'secondary'}`}
            aria-pressed={effective.action === action}
            aria-label={`${ACTION_LABELS[action]} ${row.crawler}`}
            disabled={saving}
            onClick={() => void policy.change(row.crawler, action)}
          >
            {ACTION_LABELS[action]}
          </button>
        ))}
      </div>
      <small class="muted" data-testid="action-source">
        {saving ? 'Saving…' : describeSource(effective, row.category)}
        {!saving && effective.source === 'bot' && (
          <>
            {' '}
            <button
              type="button"
              class="link"
              aria-label={`Reset ${row.crawler} to its category’s action`}
              onClick={() => void policy.change(row.crawler, null)}
            >
              reset
            </button>
          </>
        )}
      </small>
      {groupNote(row.crawler) !== null && (
        <small class="muted" data-testid="group-note">
          {groupNote(row.crawler)}
        </small>
      )}
      {!saving && allowNote(row.crawler, effective.action) !== null && (
        <small class="muted" data-testid="allow-note">
          {allowNote(row.crawler, effective.action)}
        </small>
      )}
      {error !== undefined && (
        <small class="error" role="alert">
          {errorMessage(error)}
        </small>
      )}
    </div>
  );
}
