import { compilePriceTable, requestPath, type PriceRule } from '@crawlgate/core';
import picomatch from 'picomatch';
import { format, measureSync, ratioTable } from './measure';

/**
 * Price lookup for one request path with 1, 100 and 1,000 rules: our compiled table (which also
 * normalises the URL on every call) against a first-match loop of picomatch matchers compiled once.
 */
export function priceLookupBench(): string {
  const rows = [1, 100, 1000].map((count) => {
    const rules: PriceRule[] = Array.from({ length: count }, (_, i) => ({
      pattern: i % 3 === 0 ? `/section-${i}/*` : i % 3 === 1 ? `/section-${i}/post-?` : `/section-${i}/[ab]*`,
      micros: BigInt(1000 + i),
    }));
    const paths = Array.from({ length: 512 }, (_, i) => {
      const section = (i * 7919) % (count * 2); // half the lookups match a rule, half fall to the default
      return `/section-${section}/post-${i % 10}`;
    });
    const table = compilePriceTable(rules, 1n);
    const matchers = rules.map((rule) => ({ isMatch: picomatch(rule.pattern), micros: rule.micros }));
    const picomatchResolve = (path: string) => matchers.find((matcher) => matcher.isMatch(path))?.micros ?? 1n;
    for (const path of paths) {
      if (table.resolve(path).micros !== picomatchResolve(requestPath(path))) throw new Error(`engines disagree on ${path}`);
    }
    let i = 0;
    const ours = measureSync(`crawlgate, ${count} rule(s)`, () => table.resolve(paths[i++ & 511]));
    let j = 0;
    const baseline = measureSync(`picomatch loop, ${count} rule(s)`, () => picomatchResolve(paths[j++ & 511]));
    return { ours, baseline };
  });
  return [ratioTable('Price lookup (one request path)', rows), '', worstCaseLine()].join('\n');
}

/**
 * One rule at the size limits built to make a backtracking matcher try every way its stars could
 * split the path: 511 stars, and a 2,048-character path that fails only at its last character.
 * No baseline: picomatch compiles the rule to a backtracking RegExp, which would not finish.
 */
function worstCaseLine(): string {
  const pattern = '/' + '*a'.repeat(510) + '*b'; // 1,023 characters
  const path = '/' + 'a'.repeat(2047);
  const table = compilePriceTable([{ pattern, micros: 5n }], 1n);
  if (table.resolve(path).micros !== 1n || table.resolve(path.slice(0, -1) + 'b').micros !== 5n) throw new Error('worst-case rule misread');
  const measured = measureSync('worst case', () => table.resolve(path), { batch: 100 });
  return `Worst case at the size limits (rule "/*a*a…*a*b" of ${format(pattern.length)} characters, path of ${format(path.length)} "a"s, no match): ${format(measured.nsPerOp / 1000, 1)} µs per lookup (goal: under 50 µs).`;
}
