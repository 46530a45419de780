/*
 * The package as an agent builder installs it (tools/testing/published-package.ts): built once,
 * beside only its declared dependency (@noble/hashes) and peer (viem, the builder's wallet). Then
 * it is loaded both ways by plain Node and its declarations type-check a consumer.
 */

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  distFilesContaining,
  exportsMapProblems,
  installedForSpec,
  loadEntry,
  packedPackageProblems,
  typeCheckConsumer,
  undeclaredImports,
} from '../../../tools/testing/published-package';

const EXPORTS = [
  'createAgent',
  'PriceTooHighError',
  'BudgetExceededError',
  'PaymentFailedError',
  'PaymentNotAllowedError',
  'UnsupportedPaymentError',
];

const pkg = installedForSpec(join(__dirname, '..', '..', '..', 'libs', 'agent-sdk'));

describe('the published package', () => {
  it('ships every file package.json points at', () => {
    expect(exportsMapProblems(pkg, ['.'])).toEqual([]);
  });

  it('requires Node 20 and packs clean: @arethetypeswrong/cli (node10, node16 from CJS and ESM, bundler) and publint find nothing', () => {
    expect(pkg.manifest.engines).toEqual({ node: '>=20' });
    expect(packedPackageProblems(pkg)).toEqual([]);
  }, 60_000);

  it('imports nothing, in code or declarations, that package.json does not declare, and bundles @crawlgate/core', () => {
    expect(undeclaredImports(pkg)).toEqual([]);
    expect(distFilesContaining(pkg, '@crawlgate/')).toEqual([]);
  });

  it.each(['require', 'import'] as const)('%s() works in plain Node and exports what it should', async (how) => {
    expect(await loadEntry(pkg, how, pkg.manifest.name)).toEqual(expect.arrayContaining(EXPORTS));
  });

  it('type-checks a consumer, ESM and CommonJS, against the emitted declarations', () => {
    const consumer = `import { BudgetExceededError, createAgent, PaymentFailedError, PaymentNotAllowedError, PriceTooHighError, UnsupportedPaymentError, type Agent, type AllowedNetwork, type PaymentEvent } from '${pkg.manifest.name}';
import { privateKeyToAccount } from 'viem/accounts';

const payments: PaymentEvent[] = [];
const networks: AllowedNetwork[] = ['base', { network: 'eip155:31337', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3' }];
const agent: Agent = createAgent({
  account: privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'),
  maxPriceUsd: '0.05',
  budgetUsd: '1',
  networks,
  maxAuthorizationSeconds: 120,
  onPayment: (payment) => payments.push(payment),
});
export async function run(): Promise<[number, string, bigint, number, string]> {
  try {
    const response: Response = await agent.fetch('https://example.com/article', { headers: { 'user-agent': 'GPTBot/1.0' } });
    const { usd, micros, payments: count } = agent.spent();
    return [response.status, usd, micros, count, agent.spent().remainingUsd];
  } catch (error) {
    const known = [PriceTooHighError, BudgetExceededError, PaymentFailedError, PaymentNotAllowedError, UnsupportedPaymentError].some((type) => error instanceof type);
    throw known ? error : new Error('unexpected', { cause: error });
  }
}
`;
    // node20 only: viem's declarations are ES modules alone, which a CommonJS file may require() only under node20.
    expect(typeCheckConsumer(pkg, consumer, ['node20'])).toBe('');
  });

  // Last in the file: it breaks the installed declarations, and puts them back.
  it('the type check can fail: a declaration the package ships that does not type-check is reported, in each format', () => {
    const files = ['index.d.ts', 'index.d.mts'].map((file) => join(pkg.dist, file));
    const originals = files.map((file) => readFileSync(file, 'utf8'));
    try {
      for (const file of files) appendFileSync(file, '\nexport declare const broken: NoSuchType;\n');
      const output = typeCheckConsumer(
        pkg,
        `import { createAgent } from '@crawlgate/agent';\nexport const made = createAgent;\n`,
        ['node20'],
      );
      expect(output).toMatch(/declarations\/index\.ts\(\d+,\d+\): error TS\d+: Cannot find name 'NoSuchType'/);
      expect(output).toMatch(/declarations\/index\.mts\(\d+,\d+\): error TS\d+: Cannot find name 'NoSuchType'/);
    } finally {
      files.forEach((file, i) => writeFileSync(file, originals[i]));
    }
  });
});
