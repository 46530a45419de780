import { compilePriceTable, MAX_SEARCHED_WILDCARD_RUN, requestPath, type PriceRule } from '@crawlgate/core';
import picomatch from 'picomatch';
import type { BenchResult } from './goals';
import { format, measureSync, ratioTable } from './measure';

/**
 * Price lookup for one request path with 1, 100 and 1,000 rules: our compiled table (which also
 * normalises the URL on every call) against a first-match loop of picomatch matchers compiled once.
 */
export function priceLookupBench(): BenchResult {
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
      if (table.resolve(path).micros !== picomatchResolve(requestPath(path)))
        throw new Error(`engines disagree on ${path}`);
    }
    let i = 0;
    const ours = measureSync(`crawlgate, ${count} rule(s)`, () => table.resolve(paths[i++ & 511]));
    let j = 0;
    const baseline = measureSync(`picomatch loop, ${count} rule(s)`, () => picomatchResolve(paths[j++ & 511]));
    return { ours, baseline };
  });
  const worst = worstCase();
  return {
    report: [ratioTable('Price lookup (one request path)', rows), '', worst.lines].join('\n'),
    goals: [
      {
        figure: 'price lookup, worst case at the size limits (CPU per lookup)',
        reached: `${format(worst.micros, 1)} µs`,
        goal: `< ${WORST_CASE_GOAL_MICROS} µs`,
        met: worst.micros < WORST_CASE_GOAL_MICROS,
      },
    ],
  };
}

const WORST_CASE_GOAL_MICROS = 50;

/**
 * Rules at the size limits (up to 1,023 characters; a part between stars with "?" or classes at most
 * MAX_SEARCHED_WILDCARD_RUN) on 2,048-character paths that they do not match. "/*a*a…*a*b" makes a
 * backtracking matcher try every way its 511 stars could split the path; the long parts between two
 * stars make a naive search compare most of the part at every place, and a bit-parallel one keep its
 * partial matches alive until the end ("b" only fits at the last place, or on "baba…" no place lines
 * the "a"s up with the "b"); "a…aba…a" is where String.indexOf() is quadratic (270 µs).
 * No baseline: picomatch compiles such rules to backtracking RegExps, which would not finish.
 */
function worstCase(): { lines: string; micros: number } {
  const as = '/' + 'a'.repeat(2047);
  const babas = '/' + 'ba'.repeat(1023) + 'c';
  const half = MAX_SEARCHED_WILDCARD_RUN / 2 - 1;
  const chain = ('?'.repeat(MAX_SEARCHED_WILDCARD_RUN - 1) + 'b*').repeat(7);
  const sixBs = '/' + ('a'.repeat(290) + 'b').repeat(6) + 'a'.repeat(300);
  // [name, rule, path, the path changed so that the rule matches it]
  const shapes: [string, string, string, string][] = [
    ['"/*a*a…*a*b"', '/' + '*a'.repeat(510) + '*b', as, as.slice(0, -1) + 'b'],
    ['"/*?aaa…ab*"', '/*?' + 'a'.repeat(MAX_SEARCHED_WILDCARD_RUN - 2) + 'b*', as, as.slice(0, -1) + 'b'],
    ['"/*?a?a…?b*"', '/*' + '?a'.repeat(half) + '?b*', as, as.slice(0, -1) + 'b'],
    ['"/*[ab]a[ab]a…b*"', '/*' + '[ab]a'.repeat(half) + '[ab]b*', as, as.slice(0, -1) + 'b'],
    ['"/*aaa…ab*"', '/*' + 'a'.repeat(1019) + 'b*', as, as.slice(0, -1) + 'b'],
    [
      '"/*a…aba…a*"',
      '/*' + 'a'.repeat(510) + 'b' + 'a'.repeat(510) + '*',
      as,
      as.slice(0, 1024) + 'b' + as.slice(1025),
    ],
    ['"/*???…b*" ×7', '/*' + chain, sixBs, sixBs + 'b'],
    ['"/*?a?a…?b*" on "baba…"', '/*' + '?a'.repeat(half) + '?b*', babas, babas.slice(0, -2) + 'bc'],
    ['"/*[ab]a[ab]a…b*" on "baba…"', '/*' + '[ab]a'.repeat(half) + '[ab]b*', babas, babas.slice(0, -2) + 'bc'],
  ];
  const timed = shapes.map(([name, pattern, path, hit]) => {
    const table = compilePriceTable([{ pattern, micros: 5n }], 1n);
    // The rule is read right (it matches the changed path), and only the miss is timed.
    if (table.resolve(path).micros !== 1n || table.resolve(hit).micros !== 5n)
      throw new Error(`worst-case rule ${name} misread`);
    const measured = measureSync(name, () => table.resolve(path), { batch: 20, durationMs: 700 });
    return { name, micros: measured.cpuNsPerOp! / 1000, wallMicros: measured.nsPerOp / 1000 };
  });
  const slowest = timed.reduce((x, y) => (y.micros > x.micros ? y : x));
  const lines = [
    `Worst case at the size limits (rules of up to 1,023 characters, searched parts with wildcards of ${MAX_SEARCHED_WILDCARD_RUN}, paths of 2,048 they miss): ${format(slowest.micros, 1)} µs of CPU per lookup (${format(slowest.wallMicros, 1)} µs wall), for ${slowest.name} (goal: under ${WORST_CASE_GOAL_MICROS} µs).`,
    `Each, CPU (wall): ${timed.map(({ name, micros, wallMicros }) => `${name} ${format(micros, 1)} (${format(wallMicros, 1)}) µs`).join(', ')}.`,
    "CPU time is the process's own; on a shared machine wall time also counts the time it waited for a core.",
  ].join('\n');
  return { lines, micros: slowest.micros };
}
