// Builds the publisher dashboard (apps/dashboard) with Vite into dist/apps/dashboard, or into
// CRAWLGATE_DASHBOARD_OUT when set (the browser tests build into a folder of their own).
import { build } from 'vite';

await build({ configFile: new URL('../apps/dashboard/vite.config.mts', import.meta.url).pathname });
