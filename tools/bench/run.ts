import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiBench } from './api.bench';
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
  const benches: [string, () => string | Promise<string>][] = [
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
    'Still in one process: the token and price function benchmarks, and the payment and load tests',
    '(their load generator shares the process and event loop with the API it measures).',
  ].join('\n');
  // Each section printed as it is done: a later bench failing loses none of the earlier figures.
  console.log(header + '\n');
  const sections = [header];
  for (const [name, bench] of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    sections.push(await bench());
    console.log(sections[sections.length - 1] + '\n');
  }
  if (process.argv.includes('--write')) writeFileSync(join(__dirname, 'RESULTS.md'), sections.join('\n\n') + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
