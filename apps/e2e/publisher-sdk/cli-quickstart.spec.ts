/*
 * The README's CLI quickstart, run as written: the fenced block after the `cli-quickstart` marker
 * is taken from README.md line by line and run by bash in a copy of the repository's files (what
 * a fresh clone holds, node_modules linked as `npm install` would leave it), against a real API on
 * loopback (PGlite unless DATABASE_URL is set). Two things differ from a person's terminal, both
 * as the README says: the API's URL (`http://localhost:3000` of `npm start` becomes the test API's)
 * and the password, read from CRAWLGATE_PASSWORD since there is no terminal to ask on. Aliases are
 * on (`-O expand_aliases`), as in an interactive shell. Each step's output is checked.
 */

import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../../../apps/api/test/test-app';

const ROOT = join(__dirname, '..', '..', '..');
const README_URL = 'http://localhost:3000';
const MARKER = '<!-- cli-quickstart';

/** The lines of the fenced block after the marker, without blank and comment-only lines. */
function quickstartCommands(readme: string): string[] {
  const start = readme.indexOf(MARKER);
  if (start === -1) throw new Error(`README.md has no ${MARKER} marker`);
  const block = readme.slice(start).match(/```sh\n([\s\S]*?)```/);
  if (!block) throw new Error('No ```sh block after the cli-quickstart marker');
  return block[1].split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
}

/** A copy of the files git tracks (or would: untracked but not ignored), as they are in the work tree. */
function freshClone(): string {
  const clone = mkdtempSync(join(tmpdir(), 'crawlgate-clone-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(clone, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

interface Step {
  command: string;
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs the commands in one bash, each framed by markers so its output and exit code can be told apart. */
async function runSteps(commands: string[], cwd: string, env: Record<string, string>): Promise<Step[]> {
  const script = commands
    .map(
      (command, i) =>
        `printf '\\n@@step ${i}\\n'; printf '\\n@@step ${i}\\n' >&2\n${command}\nprintf '\\n@@exit %s\\n' $?`,
    )
    .join('\n');
  const file = join(cwd, 'quickstart.sh');
  writeFileSync(file, `${script}\n`);
  const { stdout, stderr } = await promisify(execFile)('bash', ['-O', 'expand_aliases', file], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 170_000,
  });
  const part = (text: string, i: number) => text.split(`\n@@step ${i}\n`)[1]?.split(/\n@@step \d+\n/)[0] ?? '';
  return commands.map((command, i) => {
    const out = part(stdout, i);
    const exit = out.match(/\n@@exit (\d+)\n$/);
    return {
      command,
      stdout: out.replace(/\n@@exit \d+\n$/, ''),
      stderr: part(stderr, i),
      code: exit ? Number(exit[1]) : -1,
    };
  });
}

/** What each step of the quickstart must print, by the words it starts with. */
const EXPECTED: [start: string, check: (step: Step, app: TestApp) => void][] = [
  ['npx tsup --config libs/publisher-sdk/tsup.config.ts', (step) => expect(step.stdout).toMatch(/Build success/)],
  ['alias crawlgate=', (step) => expect(step.stdout).toBe('')],
  [
    'crawlgate register ',
    (step, app) =>
      expect(step.stdout).toMatch(
        new RegExp(
          `^Registered you@example\\.com at ${app.baseUrl}\\. No payout address yet.*\nPublisher +[0-9a-f-]{36}\nEmail +you@example\\.com\nName +Example News\n`,
        ),
      ),
  ],
  [
    'crawlgate payout set ',
    (step) => expect(step.stdout).toBe('Payout address set: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8\n'),
  ],
  [
    'crawlgate sites create ',
    (step) =>
      expect(step.stdout).toMatch(
        /^Created site [0-9a-f-]{36} for news\.example\.com\.[\s\S]*site token +st_\S+\n[\s\S]*access-token secret +cgsec_\S+\n/,
      ),
  ],
  [
    'crawlgate policy set ',
    (step) => expect(step.stdout).toBe('Policy of news.example.com set: default 0.002 USD, 2 rules.\n'),
  ],
  [
    'crawlgate policy show ',
    (step) => {
      expect(step.stdout).toMatch(/^Site +[0-9a-f-]{36} \(news\.example\.com\)\nDefault USD +0\.002\n/);
      expect(step.stdout).toContain('Payout address  0x70997970C51812dc3A010C7d01b50e0d17dc79C8\n');
      expect(step.stdout).toMatch(/\n0 {2}\/articles\/\* +0\.01\n1 {2}\/about +0\n/);
      expect(step.stdout).toContain('\nPath /articles/42: 0.01 USD (rule 0, /articles/*)\n');
      expect(step.stdout).toMatch(
        /\nBot policy, version 0, updated never:\n\nCategory +Action\nai-training +charge \(default\)\n[\s\S]*No crawler has an action of its own/,
      );
    },
  ],
  [
    'crawlgate bots set ',
    (step) =>
      expect(step.stdout).toMatch(
        /^GPTBot on news\.example\.com: block; the middleware applies it on its next refresh \(within 30 s\)/,
      ),
  ],
  [
    'crawlgate bots reset ',
    (step) =>
      expect(step.stdout).toMatch(
        /^GPTBot on news\.example\.com: no action of its own; its category's action applies \(ai-training charge, /,
      ),
  ],
  ['crawlgate payments ', (step) => expect(step.stdout).toBe('No payments yet.\n')],
  [
    'crawlgate stats ',
    (step) =>
      expect(step.stdout).toMatch(
        /^Site +[0-9a-f-]{36}\nDays \(UTC\) +\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\nRevenue USD +0\n[\s\S]*DAY +USD +PAID +GATES\n/,
      ),
  ],
];

describe("the README's CLI quickstart", () => {
  let app: TestApp;
  let clone: string;
  let home: string;

  beforeAll(async () => {
    app = await startTestApp();
    clone = freshClone();
    home = mkdtempSync(join(tmpdir(), 'crawlgate-home-'));
  }, 60_000);
  afterAll(async () => {
    await app.close();
    rmSync(clone, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }, 60_000);

  it('runs from a fresh clone as written, each step printing what it should', async () => {
    const commands = quickstartCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(
      commands.map(
        (command) => EXPECTED.find(([start]) => command.startsWith(start))?.[0] ?? `no expectation for: ${command}`,
      ),
    ).toEqual(EXPECTED.map(([start]) => start));
    expect(commands.filter((command) => command.includes(README_URL))).toHaveLength(1);

    const env = {
      PATH: process.env.PATH!,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      CRAWLGATE_PASSWORD: 'correct horse battery staple',
    };
    const steps = await runSteps(
      commands.map((command) => command.replace(README_URL, app.baseUrl)),
      clone,
      env,
    );
    for (const [i, step] of steps.entries()) {
      // The command in the failure message says which step broke. The CLI writes nothing to stderr
      // when all goes well; the build's own chatter there is not ours to judge.
      const stderr = step.code === 0 && !step.command.startsWith('crawlgate ') ? '' : step.stderr;
      expect({ command: step.command, code: step.code, stderr }).toEqual({
        command: step.command,
        code: 0,
        stderr: '',
      });
      EXPECTED[i][1](step, app);
    }
    expect(existsSync(join(clone, 'libs/publisher-sdk/dist/cli.cjs'))).toBe(true);
  }, 180_000);
});
