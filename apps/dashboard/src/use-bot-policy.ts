import { useState } from 'preact/hooks';
import type { BotAction, SiteBotPolicy } from '@crawlgate/publisher';
import { useSession } from './api-context';
import { useLoad } from './use-load';

export interface BotPolicyState {
  /** The policy as the API last answered it; undefined until loaded (or when it could not be). */
  policy: SiteBotPolicy | undefined;
  loadError: unknown;
  /** The crawlers whose change is on its way. */
  saving: ReadonlySet<string>;
  /** The last failed change per crawler. */
  /** A Map: a crawler may be named like an Object member ("constructor"). */
  errors: ReadonlyMap<string, unknown>;
  /** Sets a crawler's own action (null: removes it, so its category's applies again). */
  change(name: string, action: BotAction | null): Promise<void>;
}

/** A site's bot policy, changed one crawler at a time; every change answers the whole policy, which replaces ours. */
export function useBotPolicy(siteId: string): BotPolicyState {
  const { client } = useSession();
  const loaded = useLoad(() => client.getBotPolicy(siteId), [client, siteId]);
  const [answered, setAnswered] = useState<SiteBotPolicy | undefined>();
  const [saving, setSaving] = useState<ReadonlySet<string>>(new Set());
  const [errors, setErrors] = useState<ReadonlyMap<string, unknown>>(new Map());
  const policy = newer(answered, loaded.data);

  const change = async (name: string, action: BotAction | null) => {
    setSaving((names) => new Set(names).add(name));
    setErrors((previous) => withEntry(previous, name, undefined));
    try {
      const next = action
        ? await client.setBotAction(siteId, name, action)
        : await client.removeBotAction(siteId, name);
      // Two changes in flight may answer out of order: the higher version is the later state.
      setAnswered((previous) => newer(next, previous));
    } catch (error) {
      setErrors((previous) => withEntry(previous, name, error));
    } finally {
      setSaving((names) => {
        const rest = new Set(names);
        rest.delete(name);
        return rest;
      });
    }
  };

  return { policy, loadError: loaded.error, saving, errors, change };
}

function newer(a: SiteBotPolicy | undefined, b: SiteBotPolicy | undefined): SiteBotPolicy | undefined {
  if (!a || !b) return a ?? b;
  return a.version >= b.version ? a : b;
}

/** A copy of `map` with `name` set to `value`, or without it for undefined. */
function withEntry(map: ReadonlyMap<string, unknown>, name: string, value: unknown): ReadonlyMap<string, unknown> {
  const next = new Map(map);
  if (value === undefined) next.delete(name);
  else next.set(name, value);
  return next;
}
