import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * The workspace's lint configuration enforces who may import whom (eslint.config.mjs). These lint
 * made-up files at real paths through ESLint's API, so a configuration that stops enforcing a
 * boundary fails here. Type-aware rules are off for them: the files are not on disk. All probes are
 * linted by one ESLint in one child process: each run computes Nx's project graph (2.5 s of CPU).
 */

const ROOT = join(__dirname, '..', '..', '..');
const BOUNDARY = '@nx/enforce-module-boundaries';

const PROBES = {
  coreImportsMiddleware: [
    'libs/core/src/boundary-probe.ts',
    "import { identifyVisitor } from '@crawlgate/middleware';\nexport const probe = identifyVisitor;\n",
  ],
  packageImportsDevchain: [
    'libs/agent-sdk/src/boundary-probe.ts',
    "import { startAnvil } from '@crawlgate/devchain';\nexport const probe = startAnvil;\n",
  ],
  devchainImportsPackage: [
    'libs/devchain/src/boundary-probe.ts',
    "import { createAgent } from '@crawlgate/agent';\nexport const probe = createAgent;\n",
  ],
  packageImportsApi: [
    'libs/middleware/src/boundary-probe.ts',
    "import { loadConfig } from '../../../apps/api/src/config/config';\nexport const probe = loadConfig;\n",
  ],
  packageImportsCore: [
    'libs/agent-sdk/src/boundary-probe.ts',
    "import { parsePriceUsd } from '@crawlgate/core';\nexport const probe = parsePriceUsd;\n",
  ],
  apiImportsCore: [
    'apps/api/src/boundary-probe.ts',
    "import { parsePriceUsd } from '@crawlgate/core';\nexport const probe = parsePriceUsd;\n",
  ],
} satisfies Record<string, [file: string, code: string]>;

type Probe = keyof typeof PROBES;
interface LintMessage {
  ruleId: string | null;
  message: string;
}

/** Lints every probe's code as its file: each probe's messages. */
async function lintProbes(): Promise<Record<Probe, LintMessage[]>> {
  const script = `const { ESLint } = require(${JSON.stringify(join(ROOT, 'node_modules/eslint'))});
const probes = JSON.parse(process.argv[1]);
(async () => {
  const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
  const messages = {};
  for (const [name, [filePath, code]] of Object.entries(probes))
    messages[name] = (await eslint.lintText(code, { filePath }))[0].messages.map(({ ruleId, message }) => ({ ruleId, message }));
  console.log(JSON.stringify(messages));
})();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, JSON.stringify(PROBES)], {
    cwd: ROOT,
    env: { ...process.env, CRAWLGATE_LINT_UNTYPED: '1', NX_DAEMON: 'false' },
  });
  return JSON.parse(stdout) as Record<Probe, LintMessage[]>;
}

describe('module boundaries (lint)', () => {
  let linted: Record<Probe, LintMessage[]>;

  beforeAll(async () => {
    linted = await lintProbes();
  }, 120_000);

  /** The boundary rule's messages for a probe; a probe ESLint could not parse fails the test. */
  function boundaryErrors(probe: Probe): string[] {
    const parsing = linted[probe].filter((message) => message.ruleId === null);
    if (parsing.length > 0) throw new Error(parsing.map((message) => message.message).join('\n'));
    return linted[probe].filter((message) => message.ruleId === BOUNDARY).map((message) => message.message);
  }

  it('core may not import a package of ours (every package depends on core: reported as a cycle)', () => {
    expect(boundaryErrors('coreImportsMiddleware').join('\n')).toMatch(/"core" and "middleware"/);
  });

  it('a published package may not import the dev chain, nor the dev chain a package (tags)', () => {
    expect(boundaryErrors('packageImportsDevchain').join('\n')).toMatch(/type:package/);
    expect(boundaryErrors('devchainImportsPackage').join('\n')).toMatch(/type:dev/);
  });

  it('a published package may not import the API', () => {
    expect(boundaryErrors('packageImportsApi').length).toBeGreaterThan(0);
  });

  it('a package may import core, and so may the API', () => {
    expect(boundaryErrors('packageImportsCore')).toEqual([]);
    expect(boundaryErrors('apiImportsCore')).toEqual([]);
  });
});
