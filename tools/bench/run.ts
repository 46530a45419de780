import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiBench } from './api.bench';
import { middlewareBench } from './middleware.bench';
import { paymentBench } from './payment.bench';
import { loadTest } from './load-test.bench';
import { priceLookupBench } from './price-lookup.bench';
import { tokenVerifyBench } from './token-verify.bench';

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
    ['api', apiBench],
    ['payment', paymentBench],
    ['load', loadTest],
  ];
  const sections = [];
  for (const [name, bench] of benches) if (only.length === 0 || only.includes(name)) sections.push(await bench());
  const header = [
    '# Benchmark results',
    '',
    `Produced by \`npm run bench -- --write\` on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${require('node:os').cpus().length} cores.`,
    'Each ratio compares ours with a baseline measured in the same process and run; above 1 means ours is faster.',
  ].join('\n');
  const report = [header, ...sections].join('\n\n') + '\n';
  console.log(report);
  if (process.argv.includes('--write')) writeFileSync(join(__dirname, 'RESULTS.md'), report);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
