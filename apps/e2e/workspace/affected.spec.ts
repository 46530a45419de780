import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * `nx affected` from the project graph and the declared inputs (nx.json, project.json): which
 * projects a change to one file reaches. Each case is a mistake the graph once made or could make.
 */

const ROOT = join(__dirname, '..', '..', '..');
const NX = join(ROOT, 'node_modules/nx/dist/bin/nx.js');

async function affectedBy(file: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [NX, 'show', 'projects', '--affected', `--files=${file}`, '--json'],
    { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' } },
  );
  return (JSON.parse(stdout) as string[]).sort();
}

const PACKAGES = ['agent-sdk', 'mcp', 'middleware', 'publisher-sdk'];

describe('nx affected', () => {
  jest.setTimeout(120_000);

  it('an API change reaches the API and the e2e tests, never a published package', async () => {
    const affected = await affectedBy('apps/api/src/main.ts');
    expect(affected).toEqual(expect.arrayContaining(['api', 'e2e']));
    for (const name of [...PACKAGES, 'core']) expect(affected).not.toContain(name);
  });

  it('a dashboard change reaches the dashboard and its browser tests', async () => {
    expect(await affectedBy('apps/dashboard/src/money.ts')).toEqual(expect.arrayContaining(['dashboard', 'e2e']));
  });

  it('a schema or migration change reaches the API', async () => {
    const affected = await affectedBy('prisma/schema.prisma');
    expect(affected).toEqual(expect.arrayContaining(['api', 'e2e']));
    expect(affected).not.toContain('middleware');
  });

  it('a change to the shared package build reaches every published package', async () => {
    expect(await affectedBy('tools/build/tsup-library.ts')).toEqual(expect.arrayContaining(PACKAGES));
  });

  it('a change to a jest preset reaches every project with tests', async () => {
    expect(await affectedBy('jest.preset.js')).toEqual(
      expect.arrayContaining([...PACKAGES, 'api', 'core', 'dashboard', 'devchain', 'e2e']),
    );
  });

  it('a core change reaches everything that imports core', async () => {
    expect(await affectedBy('libs/core/src/price.ts')).toEqual(
      expect.arrayContaining([...PACKAGES, 'api', 'core', 'dashboard', 'devchain', 'e2e']),
    );
  });
});
