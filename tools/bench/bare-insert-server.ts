import Fastify from 'fastify';
import { Pool } from 'pg';
import { onParentGone } from './child';

/**
 * The API benchmark's baseline, in a process of its own: the least a gate endpoint can do, one
 * INSERT of a comparable row into bare_gates (created by the parent) in BENCH_STACK's schema,
 * answered 402 with its id. Prints its port once listening.
 */
async function main(): Promise<void> {
  const { databaseUrl, schema } = JSON.parse(process.env.BENCH_STACK ?? '') as { databaseUrl: string; schema: string };
  const pool = new Pool({ connectionString: databaseUrl, max: 10, options: `-c search_path="${schema}"` });
  const server = Fastify();
  server.post('/gates', async (request, reply) => {
    const { rows } = await pool.query(
      'INSERT INTO bare_gates (site_id, url, price_micros) VALUES ($1, $2, $3) RETURNING id',
      [request.headers['x-site-token'], (request.body as { url: string }).url, 10000],
    );
    return reply.status(402).send({ id: rows[0].id });
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  onParentGone(async () => {
    await server.close();
    await pool.end();
  });
  process.stdout.write(`${(server.server.address() as { port: number }).port}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
