import type { AllowedNetwork } from '@crawlgate/agent';

/**
 * CRAWLGATE_NETWORKS as the agent's `networks` option: a comma list of registry networks
 * ("base,base-sepolia"), or JSON for anything that names its token
 * (`[{"network":"local","asset":"0x…"}]`). Only the shape is checked here; which networks and
 * assets exist is the agent's check, at start-up.
 */
export function parseNetworksSetting(text: string): { networks: AllowedNetwork[] } | { problem: string } {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) {
    const names = trimmed
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    return names.length > 0 ? { networks: names as AllowedNetwork[] } : { problem: 'names no network' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return { problem: 'is not valid JSON' };
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return { problem: 'must be a non-empty JSON array' };
  for (const [index, entry] of parsed.entries()) {
    const problem = entryProblem(entry);
    if (problem) return { problem: `entry ${index}: ${problem}` };
  }
  return { networks: parsed as AllowedNetwork[] };
}

function entryProblem(entry: unknown): string | null {
  if (typeof entry === 'string') return null;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return 'must be a network name or {"network", "asset", "domain"?}';
  const { network, asset, domain, ...rest } = entry as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return `unknown field "${unknown[0]}"`;
  if (typeof network !== 'string' || typeof asset !== 'string') return '"network" and "asset" must be strings';
  if (domain === undefined) return null;
  const { name, version } = (domain ?? {}) as Record<string, unknown>;
  return typeof name === 'string' && typeof version === 'string'
    ? null
    : '"domain" must be {"name", "version"}, both strings';
}
