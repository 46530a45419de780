/*
 * A small, honest micro-benchmark loop: warm up, then run for a fixed time in batches and report
 * operations per second. Every benchmark here compares against a baseline measured in the same
 * process and run, so machine speed cancels out of the ratio.
 */

export interface Measurement {
  name: string;
  opsPerSecond: number;
  nsPerOp: number;
  /** CPU time of the process per operation (measureSync only): on a shared machine, wall time also counts waiting for a core. */
  cpuNsPerOp?: number;
}

export async function measure(
  name: string,
  op: () => unknown,
  { durationMs = 1500, batch = 1000 } = {},
): Promise<Measurement> {
  for (let i = 0; i < batch * 5; i++) await op(); // warm-up: let the JIT settle
  let ops = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(durationMs) * 1_000_000n;
  let now = started;
  while (now < deadline) {
    for (let i = 0; i < batch; i++) await op();
    ops += batch;
    now = process.hrtime.bigint();
  }
  const seconds = Number(now - started) / 1e9;
  return { name, opsPerSecond: ops / seconds, nsPerOp: (seconds * 1e9) / ops };
}

/** Synchronous operations measured without an await per call (awaiting a non-promise still costs a tick). */
export function measureSync(name: string, op: () => unknown, { durationMs = 1500, batch = 1000 } = {}): Measurement {
  for (let i = 0; i < batch * 5; i++) op();
  let ops = 0;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(durationMs) * 1_000_000n;
  let now = started;
  while (now < deadline) {
    for (let i = 0; i < batch; i++) op();
    ops += batch;
    now = process.hrtime.bigint();
  }
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = Number(now - started) / 1e9;
  return {
    name,
    opsPerSecond: ops / seconds,
    nsPerOp: (seconds * 1e9) / ops,
    cpuNsPerOp: ((cpu.user + cpu.system) * 1000) / ops,
  };
}

export const format = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A markdown table: each row's ratio is ours ÷ baseline in ops/s (above 1: we are faster). */
export function ratioTable(title: string, rows: { ours: Measurement; baseline: Measurement }[]): string {
  const lines = [
    `### ${title}`,
    '',
    '| case | ours ops/s | baseline | baseline ops/s | ratio (ours/baseline) |',
    '|---|---:|---|---:|---:|',
  ];
  for (const { ours, baseline } of rows) {
    lines.push(
      `| ${ours.name} | ${format(ours.opsPerSecond)} | ${baseline.name} | ${format(baseline.opsPerSecond)} | ${format(ours.opsPerSecond / baseline.opsPerSecond, 2)} |`,
    );
  }
  return lines.join('\n');
}
