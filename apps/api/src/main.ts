import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp, LOG_LEVELS } from './app/create-app';
import { logRedactor, RedactingLogger } from './app/redacting-logger';
import { tuneV8ForServer } from './app/v8-tuning';
import { connectChain } from './chain/connect-chain';
import { loadConfig, loggableUrl } from './config/config';
import { databaseKind, openDatabase } from './db/database';
import { dashboardBuilt } from './dashboard/serve-dashboard';
import { migrate } from './db/migrator';
import { relayerBroadcastTurn, relayerTurnWaitMs } from './db/relayer-broadcast-turn';
import { SiteSecretsService } from './sites/site-secrets.service';

/** Blanks the configured URLs' secrets from every line, also before the app's own logger exists and on a failed start. */
let redact = (text: string) => text;

/** `npm start`: migrate the database, then serve. */
async function main(): Promise<void> {
  const config = loadConfig();
  redact = logRedactor({ rpcUrl: config.chain.rpcUrl, others: [config.databaseUrl, config.redisUrl] });
  Logger.overrideLogger(new RedactingLogger(redact, LOG_LEVELS[config.logLevel]));
  const logger = new Logger('Crawlgate');
  tuneV8ForServer(databaseKind(config));
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const { applied } = await migrate(database.sql);
  logger.log(
    `Database: ${database.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}/pglite` : 'PostgreSQL'}; ${applied.length} migration(s) applied`,
  );

  const chain = await connectChain(config.chain, relayerBroadcastTurn(database, relayerTurnWaitMs(config.chain)));
  logger.log(
    `Chain: ${chain.context.network.name} (chain id ${chain.context.chainId}) at ${loggableUrl(chain.context.rpcUrl)}, USDC ${chain.context.usdc}`,
  );

  const app = await createApp({ config, database, chain: chain.context });
  await app.get(SiteSecretsService).assertMasterKeyOpensSecrets();
  await app.listen({ port: config.port, host: config.host });
  const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  logger.log(
    `Crawlgate API listening on http://${shown}:${config.port}/v1 (docs: http://${shown}:${config.port}/docs)`,
  );
  logger.log(
    dashboardBuilt(config.dashboardDir)
      ? `Publisher dashboard: http://${shown}:${config.port}/dashboard/`
      : `Publisher dashboard not built (${config.dashboardDir}): run npm run build:dashboard`,
  );

  const shutdown = async (signal: string) => {
    logger.log(`${signal}: shutting down`);
    await app.close();
    await database.close();
    await chain.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error) => {
  console.error(redact(error instanceof Error ? error.message : String(error)));
  process.exit(1);
});
