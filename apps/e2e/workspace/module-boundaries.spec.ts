import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * The workspace's lint configuration enforces who may import whom (eslint.config.mjs). These lint
 * made-up files at real paths through ESLint's CLI (stdin), so a configuration that stops
 * enforcing a boundary fails here. Type-aware rules are off for them: the files are not on disk.
 */

const ROOT = join(__dirname, '..', '..', '..');
const ESLINT = join(ROOT, 'node_modules/eslint/bin/eslint.js');
const BOUNDARY = '@nx/enforce-module-boundaries';

async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const run = promisify(execFile)(process.execPath, [ESLINT, '--stdin', '--stdin-filename', file, '-f', 'json'], {
    cwd: ROOT,
    env: { ...process.env, CRAWLGATE_LINT_UNTYPED: '1', NX_DAEMON: 'false' },
  });
  run.child.stdin?.end(code);
  // ESLint exits 1 when it reports errors; its JSON is on stdout either way.
  const { stdout } = await run.catch((error: { stdout?: string; code?: number }) => {
    if (error.code !== 1 || !error.stdout) throw error;
    return { stdout: error.stdout };
  });
  const [result] = JSON.parse(stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  const parsing = result.messages.filter((message) => message.ruleId === null);
  if (parsing.length > 0) throw new Error(parsing.map((message) => message.message).join('\n'));
  return result.messages.filter((message) => message.ruleId === BOUNDARY).map((message) => message.message);
}

describe('module boundaries (lint)', () => {
  jest.setTimeout(120_000);

  it('core may not import a package of ours (every package depends on core: reported as a cycle)', async () => {
    const errors = await boundaryErrors(
      'libs/core/src/boundary-probe.ts',
      "import { identifyVisitor } from '@crawlgate/middleware';\nexport const probe = identifyVisitor;\n",
    );
    expect(errors.join('\n')).toMatch(/"core" and "middleware"/);
  });

  it('a published package may not import the dev chain, nor the dev chain a package (tags)', async () => {
    const intoDevchain = await boundaryErrors(
      'libs/agent-sdk/src/boundary-probe.ts',
      "import { startAnvil } from '@crawlgate/devchain';\nexport const probe = startAnvil;\n",
    );
    expect(intoDevchain.join('\n')).toMatch(/type:package/);
    const fromDevchain = await boundaryErrors(
      'libs/devchain/src/boundary-probe.ts',
      "import { createAgent } from '@crawlgate/agent';\nexport const probe = createAgent;\n",
    );
    expect(fromDevchain.join('\n')).toMatch(/type:dev/);
  });

  it('a published package may not import the API', async () => {
    const errors = await boundaryErrors(
      'libs/middleware/src/boundary-probe.ts',
      "import { loadConfig } from '../../../apps/api/src/config/config';\nexport const probe = loadConfig;\n",
    );
    expect(errors.length).toBeGreaterThan(0);
  });

  it('a package may import core, and so may the API', async () => {
    const imported = "import { parsePriceUsd } from '@crawlgate/core';\nexport const probe = parsePriceUsd;\n";
    expect(await boundaryErrors('libs/agent-sdk/src/boundary-probe.ts', imported)).toEqual([]);
    expect(await boundaryErrors('apps/api/src/boundary-probe.ts', imported)).toEqual([]);
  });
});
