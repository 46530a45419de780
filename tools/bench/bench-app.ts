import { DEV_ROLES } from '@crawlgate/devchain';
import { createApp } from '../../apps/api/src/app/create-app';
import { ClaimerService } from '../../apps/api/src/batch-settlement/claimer.service';
import { createChainContext, type ChainContext } from '../../apps/api/src/chain/chain-context';
import { LOCAL_CLAIM_AUTHORIZER } from '../../apps/api/src/chain/local-chain';
import { loadConfig } from '../../apps/api/src/config/config';
import { openDatabase } from '../../apps/api/src/db/database';
import type { BenchStack } from './bench-api';

// Apart from bench-api.ts, which also builds and starts processes (tsup, anvil): the API process
// (api-server.ts) bundles only this file, so its memory is the API's, not the build tools'.

/** The real API on a stack, listening on loopback, as the API's own main.ts builds it. */
export async function listenBenchApp(stack: Omit<BenchStack, 'close'>) {
  const database = await openDatabase({ databaseUrl: stack.databaseUrl, schema: stack.schema });
  const config = benchConfig();
  const chain = benchChain(stack);
  const app = await createApp({ config, database, chain, masterKey: Buffer.from(stack.masterKey, 'hex') });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.getHttpServer().address() as { port: number }).port;
  return {
    port,
    chain,
    /** Claims and settles every channel with vouchers now, whatever the claimer's size and age thresholds. */
    claim: () => app.get(ClaimerService).runOnce({ force: true }),
    async close() {
      await app.close();
      await database.close();
    },
  };
}

/** The API's configuration on a bench stack: silent, behind one proxy hop, polling the local chain every 20 ms. */
function benchConfig() {
  const config = { ...loadConfig({}), logLevel: 'silent' as const, trustProxyHops: 1 };
  config.chain = { ...config.chain, pollingIntervalMs: 20 };
  return config;
}

/** The chain's clients as a bench stack's API has them (its relayer key, token and polling). */
export function benchChain(stack: Pick<BenchStack, 'rpcUrl' | 'usdc'>): ChainContext {
  return createChainContext({
    config: benchConfig().chain,
    rpcUrl: stack.rpcUrl,
    relayerPrivateKey: DEV_ROLES.relayer.privateKey,
    usdc: stack.usdc,
    claimAuthorizerPrivateKey: LOCAL_CLAIM_AUTHORIZER.privateKey,
  });
}

export type BenchApp = Awaited<ReturnType<typeof listenBenchApp>>;
