import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARD_PAGE_HEADERS } from '../http/page-security-headers';

export const DASHBOARD_PREFIX = '/dashboard/';

/**
 * Serves the built dashboard (apps/dashboard, built by Vite) at /dashboard/. Hashed assets are cached
 * for a year, index.html never, so a new build shows on the next load. Without a build the routes
 * answer 404 with how to make one.
 */
export function serveDashboard(app: NestFastifyApplication, dashboardDir: string): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get('/dashboard', (_request, reply) => reply.redirect(DASHBOARD_PREFIX, 301));
  if (!dashboardBuilt(dashboardDir)) {
    const notBuilt = (_request: unknown, reply: FastifyReply) =>
      reply.code(404).send({
        detail: `The dashboard is not built (no ${join(dashboardDir, 'index.html')}). Run \`npm run build:dashboard\`; \`npm start\` builds it.`,
      });
    fastify.get(DASHBOARD_PREFIX, notBuilt);
    fastify.get(`${DASHBOARD_PREFIX}*`, notBuilt);
    return;
  }
  fastify.register(async (instance) => {
    await instance.register(fastifyStatic, {
      root: dashboardDir,
      prefix: DASHBOARD_PREFIX,
      decorateReply: false,
      index: ['index.html'],
      // A deploy may leave a .env or .git beside the build: never served.
      dotfiles: 'ignore',
      // Ours alone, set below: a year for hashed assets, revalidate index.html.
      cacheControl: false,
      setHeaders(reply: FastifyReply, path: string) {
        reply.headers(DASHBOARD_PAGE_HEADERS);
        reply.header(
          'cache-control',
          path.includes(`${join(dashboardDir, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    });
  });
}

export function dashboardBuilt(dashboardDir: string): boolean {
  return existsSync(join(dashboardDir, 'index.html'));
}
