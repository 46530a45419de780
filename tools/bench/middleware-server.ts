import { startServer, type Framework, type Gate } from './bench-servers';
import { onParentGone } from './child';

/**
 * A server under test, in a process of its own: `middleware-server.ts <Express|Fastify|Hono>`,
 * gated with the options in BENCH_GATE (JSON; or the JSON string "empty middleware") when set,
 * bare otherwise. Prints its port once listening; shuts down cleanly when its stdin ends, so
 * `node --cpu-prof` writes its profile.
 */
async function main(): Promise<void> {
  const framework = process.argv[2] as Framework;
  if (!(framework in startServer)) throw new Error(`unknown framework ${framework}`);
  const gate: Gate = process.env.BENCH_GATE
    ? (JSON.parse(process.env.BENCH_GATE) as Exclude<Gate, undefined>)
    : undefined;
  const server = await startServer[framework](gate);
  onParentGone(() => server.close());
  process.stdout.write(`${server.port}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
