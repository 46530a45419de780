import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { pinning } from './pinning';

/** What a result was measured on, for RESULTS.md: ratios travel between machines, rates do not. */
export function machineDescription(): string {
  const model = /^model name\s*:\s*(.+)$/m.exec(readCpuinfo())?.[1] ?? 'unknown CPU';
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
  return [
    `Date ${new Date().toISOString().slice(0, 10)}; nproc ${availableParallelism()}; CPU ${model}; Node ${process.version}.`,
    // Other work on the machine slows rounds unevenly; the spread beside each ratio shows how much.
    `Load average when the run started: ${load}. Pinning: ${pinning.note}. ${codeVersion()}.`,
  ].join('\n');
}

/** Which code was measured: a number taken over someone's half-made edit says nothing about either commit. */
function codeVersion(): string {
  // GIT_OPTIONAL_LOCKS=0: status must not rewrite the index others are committing with.
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    }).trim();
  try {
    const dirty = git('status', '--porcelain', '--', 'libs', 'apps') !== '';
    return `Code measured: commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ', with uncommitted changes in libs/ or apps/' : ''}`;
  } catch {
    return 'Code measured: unknown (not a git checkout)';
  }
}

function readCpuinfo(): string {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}
