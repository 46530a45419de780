import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiBench } from './api.bench';
import { goalsTable, type BenchResult, type Goal } from './goals';
import { middlewareBench } from './middleware.bench';
import { signedRequestBench } from './middleware-signature.bench';
import { paymentBench } from './payment.bench';
import { loadTest } from './load-test.bench';
import { machineDescription } from './machine';
import { priceLookupBench } from './price-lookup.bench';
import { tokenVerifyBench } from './token-verify.bench';
import { voucherBench } from './voucher.bench';

/**
 * `npm run bench`: every benchmark, each against its baseline in the same run; `-- --write` updates
 * RESULTS.md; `-- api` (or token, price, …) runs only those named.
 */
async function main(): Promise<void> {
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const benches: [string, () => BenchResult | Promise<BenchResult>][] = [
    ['token', tokenVerifyBench],
    ['price', priceLookupBench],
    ['middleware', middlewareBench],
    ['signature', signedRequestBench],
    ['api', apiBench],
    ['payment', paymentBench],
    ['voucher', voucherBench],
    ['load', loadTest],
  ];
  const header = [
    '# Benchmark results',
    '',
    `Produced by \`npm run bench -- --write\`. ${machineDescription()}`,
    '',
    'Every ratio is ours ÷ a baseline measured in the same run; above 1 means ours is faster.',
    'The middleware and API figures run each server in a process of its own and the load generator in another,',
    "with baseline and ours in alternating rounds (median of the pairs' ratios, spread beside it).",
    'So does the load test: its API, gated server and load generator each run in a process of their own,',
    'and the payment and voucher latencies: their agent, gated site and API, one request at a time.',
    'Still in one process: the token, price and signed-request function benchmarks.',
    'Earlier runs, and what each change did to the figures: HISTORY.md beside this file.',
  ].join('\n');
  // Each section printed as it is done: a later bench failing loses none of the earlier figures.
  console.log(header + '\n');
  const sections: string[] = [];
  const goals: Goal[] = [];
  for (const [name, bench] of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    const result = await bench();
    sections.push(result.report);
    goals.push(...result.goals);
    console.log(result.report + '\n');
  }
  const summary = goalsTable(goals);
  console.log(summary + '\n');
  // The summary goes first in the file: what a reader wants, from the same run as every section under it.
  if (process.argv.includes('--write'))
    writeFileSync(join(__dirname, 'RESULTS.md'), [header, summary, ...sections].join('\n\n') + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
