import {
  compilePriceTable,
  formatMicrosUsd,
  parsePriceUsd,
  requestPath,
  validatePathPattern,
  type PriceRule,
} from '@crawlgate/core';
import type { Pricing, PricingInput } from '@crawlgate/publisher';

/** The pricing editor's unsaved state: prices stay as typed until the API judges them. */
export interface PricingDraft {
  defaultPrice: string;
  rules: DraftRule[];
}

export interface DraftRule {
  /** Stable across moves, so the list keeps each input's focus and text. */
  key: number;
  path: string;
  price: string;
}

let nextKey = 1;

export function draftFromPricing(pricing: Pick<Pricing, 'default_price_usd' | 'rules'>): PricingDraft {
  return {
    defaultPrice: pricing.default_price_usd,
    rules: pricing.rules.map((rule) => ({ key: nextKey++, path: rule.path, price: rule.price_usd })),
  };
}

/** The body of PUT /v1/sites/{id}/pricing; prices go as typed, so the API's 422 names the field. */
export function pricingInput(draft: PricingDraft): PricingInput {
  return {
    default_price_usd: draft.defaultPrice.trim(),
    rules: draft.rules.map((rule) => ({ path: rule.path, price_usd: rule.price.trim() })),
  };
}

export function addRule(draft: PricingDraft): PricingDraft {
  return { ...draft, rules: [...draft.rules, { key: nextKey++, path: '/', price: draft.defaultPrice }] };
}

export function removeRule(draft: PricingDraft, index: number): PricingDraft {
  return { ...draft, rules: draft.rules.filter((_, i) => i !== index) };
}

export function updateRule(
  draft: PricingDraft,
  index: number,
  change: Partial<Pick<DraftRule, 'path' | 'price'>>,
): PricingDraft {
  return { ...draft, rules: draft.rules.map((rule, i) => (i === index ? { ...rule, ...change } : rule)) };
}

/** Moves a rule up (-1) or down (+1); order decides which rule wins. Out of range is a no-op. */
export function moveRule(draft: PricingDraft, index: number, delta: -1 | 1): PricingDraft {
  const target = index + delta;
  if (index < 0 || index >= draft.rules.length || target < 0 || target >= draft.rules.length) return draft;
  const rules = [...draft.rules];
  [rules[index], rules[target]] = [rules[target], rules[index]];
  return { ...draft, rules };
}

export type PathPreview =
  | { ok: true; path: string; priceUsd: string; rule: number | null; pattern: string | null }
  | { ok: false; problem: string };

/**
 * Which rule of the draft wins for a path, and its price: the same compiler and path rules the API
 * uses (libs/core), so the answer is what the middleware will charge once the draft is saved.
 */
export function previewPath(draft: PricingDraft, url: string): PathPreview {
  const defaultPrice = parsePriceUsd(draft.defaultPrice.trim());
  if (!defaultPrice.ok) return { ok: false, problem: `Default price: ${defaultPrice.msg}` };
  const rules: PriceRule[] = [];
  for (const [index, rule] of draft.rules.entries()) {
    const pattern = validatePathPattern(rule.path);
    if (pattern) return { ok: false, problem: `Rule ${index + 1}: ${pattern.msg}` };
    const price = parsePriceUsd(rule.price.trim());
    if (!price.ok) return { ok: false, problem: `Rule ${index + 1}: ${price.msg}` };
    rules.push({ pattern: rule.path, micros: price.micros });
  }
  const match = compilePriceTable(rules, defaultPrice.micros).resolve(url);
  return {
    ok: true,
    path: requestPath(url),
    priceUsd: formatMicrosUsd(match.micros),
    rule: match.rule,
    pattern: match.pattern,
  };
}
