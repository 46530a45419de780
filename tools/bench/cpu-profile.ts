import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { format } from './measure';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs on the monotonic clock process.hrtime reads, in every process of this machine. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  /** Share of the process's busy (non-idle) samples in the window taken in this function itself. */
  share: number;
}

export interface ProfileSummary {
  /** Busy share of the window's samples: well under 1 means the server often had no request to work on. */
  busy: number;
  top: SelfTime[];
  /** Share of the busy samples spent in code from the files `within` matched, and the built-ins it called. */
  within?: { files: string; share: number };
}

/** µs now, on the clock of a profile's timestamps. */
export const profileClock = () => Number(process.hrtime.bigint() / 1000n);

/**
 * The `count` functions with the most self time in the one .cpuprofile `node --cpu-prof` wrote
 * into `dir`, counting only samples between `from` and `to` (profileClock()): the load, not the
 * process's start-up (module loading and compiling) nor its shutdown.
 */
export function summarizeProfile(
  dir: string,
  from: number,
  to: number,
  count = 5,
  within?: { files: string; url: RegExp },
): ProfileSummary {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const names = new Map(profile.nodes.map((node) => [node.id, frameName(node.callFrame)]));
  const inside = within ? nodesWithin(profile.nodes, within.url) : new Set<number>();
  let insideSamples = 0;
  // Samples counted, not their time deltas: on a shared core a delta also holds the time the
  // process was descheduled, which is no function's cost.
  const samples = new Map<string, number>();
  let time = profile.startTime;
  profile.samples.forEach((id, i) => {
    time += profile.timeDeltas[i];
    if (time < from || time > to) return;
    const name = names.get(id)!;
    samples.set(name, (samples.get(name) ?? 0) + 1);
    if (inside.has(id)) insideSamples++;
  });
  const all = [...samples.values()].reduce((a, b) => a + b, 0);
  samples.delete('(idle)'); // waiting for requests is not the server's work
  const busy = [...samples.values()].reduce((a, b) => a + b, 0);
  const top = [...samples]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, self]) => ({ name, share: self / busy }));
  return { busy: busy / all, top, ...(within ? { within: { files: within.files, share: insideSamples / busy } } : {}) };
}

/**
 * The nodes whose time is the code `url` matches, with the built-ins it called (V8, node:*): a
 * frame counts when the nearest frame of a JS file at or above it is one of those files. Framework
 * code the gate calls on to (Express's next(), Fastify's reply) is the framework's, not the gate's.
 */
function nodesWithin(nodes: ProfileNode[], url: RegExp): Set<number> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const judged = new Map<number, boolean>();
  const isInside = (id: number): boolean => {
    let answer = judged.get(id);
    if (answer === undefined) {
      const file = byId.get(id)!.callFrame.url;
      const up = parent.get(id);
      answer = url.test(file) || (isBuiltIn(file) && up !== undefined && isInside(up));
      judged.set(id, answer);
    }
    return answer;
  };
  return new Set(nodes.filter((node) => isInside(node.id)).map((node) => node.id));
}

/** V8's own frames (no file) and Node's built-in modules. */
const isBuiltIn = (file: string) => file === '' || file.startsWith('node:');

/** `name file:line`, the file from node_modules/ or relative to here; a long RegExp source cut short. */
function frameName({ functionName, url, lineNumber }: ProfileNode['callFrame']): string {
  const name = functionName.length > 80 ? functionName.slice(0, 77) + '...' : functionName || '(anonymous)';
  if (!url) return name;
  const path = url.replace(/^file:\/\//, '');
  const file = path.includes('/node_modules/')
    ? path.slice(path.lastIndexOf('/node_modules/') + 1)
    : path.startsWith('/')
      ? relative(process.cwd(), path)
      : path;
  return `${name} ${file}:${lineNumber + 1}`;
}

export const selfTimeList = ({ busy, top, within }: ProfileSummary) =>
  [
    `Busy in ${format(busy * 100)}% of the window's samples; share of the busy samples:`,
    '',
    ...top.map(({ name, share }, i) => `${i + 1}. \`${name}\` ${format(share * 100, 1)}%`),
    ...(within
      ? [
          '',
          `In ${within.files} and the built-ins it called (not the framework code it hands on to): ${format(within.share * 100, 1)}%.`,
        ]
      : []),
  ].join('\n');
