import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { revert, snapshot } from '@crawlgate/devchain';
import { randomBytes } from 'node:crypto';
import { createApp } from '../src/app/create-app';
import { ClaimerHeartbeatStore } from '../src/batch-settlement/claimer-heartbeat.store';
import { loadConfig, type AppConfig } from '../src/config/config';
import type { ChainContext } from '../src/chain/chain-context';
import type { Database } from '../src/db/database';
import { relayerBroadcastTurn, relayerTurnWaitMs } from '../src/db/relayer-broadcast-turn';
import { httpCaller, type Call } from './http-call';
import { endFeeSpike, testChainConfig, testChainContext } from './test-chain';
import { createTestDatabase } from './test-database';

export type { CallOptions, CallResult } from './http-call';

export interface TestApp {
  /** e.g. http://127.0.0.1:41234 — a real listening server on loopback. */
  baseUrl: string;
  app: NestFastifyApplication;
  database: Database;
  config: AppConfig;
  chain: ChainContext;
  /** fetch against the app: JSON in, parsed JSON out. */
  call: Call;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Omit<AppConfig, 'chain'>> & { chain?: Partial<AppConfig['chain']> };
  /** Share a master key with another app on the same database (restart tests). */
  masterKey?: Buffer;
  /** Talk to the chain through this RPC URL instead of the worker's chain. */
  chainRpcUrl?: string;
  /** Snapshot the worker's chain at start and revert it at close, so balances never leak between files. */
  isolateChain?: boolean;
  /** Share a database with another app (scale-out tests). */
  database?: Database;
  redisPrefix?: string;
  /**
   * Record a claimer run on the database at start, as the instance that claims does where this
   * one's claimer is off (the tests' default: testChainConfig): vouchers are taken only while some
   * claimer keeps up. false: none has run (a test of that check).
   */
  claimerHeartbeat?: boolean;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const owned = options.database ? undefined : await createTestDatabase();
  const database = options.database ?? owned!.database;
  const { chain: chainOverrides, ...overrides } = options.config ?? {};
  const config: AppConfig = {
    ...loadConfig({}),
    logLevel: testLogLevel(),
    redisUrl: undefined,
    trustProxyHops: 1,
    // Suites register and log in hundreds of publishers: a cheaper scrypt (the same code; password.spec
    // checks the production cost) took publishers.spec from 92 s to 18 s.
    passwordScryptLogN: 10,
    ...overrides,
    chain: testChainConfig(chainOverrides),
  };
  const chain = testChainContext(
    config.chain,
    options.chainRpcUrl,
    relayerBroadcastTurn(database, relayerTurnWaitMs(config.chain)),
  );
  const chainSnapshot = options.isolateChain ? await snapshot(chain.rpcUrl) : undefined;
  const app = await createApp({
    config,
    database,
    chain,
    masterKey: options.masterKey ?? randomBytes(32),
    redisPrefix: options.redisPrefix,
  });
  if (options.claimerHeartbeat !== false) await app.get(ClaimerHeartbeatStore).record(0);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;

  return {
    baseUrl,
    app,
    database,
    config,
    chain,
    call: httpCaller(baseUrl),
    async close() {
      await app.close();
      if (chainSnapshot) {
        await revert(chain.rpcUrl, chainSnapshot);
        // Fees low again for the next spec file on this chain: a spike left behind priced its
        // payments above the relayer's maximum (CI saw claimer-fee-bump's deposit refused 503).
        // Every fee spec ends its spikes itself too; this holds for a test that failed midway.
        await endFeeSpike(chain);
      }
      await owned?.dispose();
    },
  };
}

/**
 * Another instance of `app`'s API, on its database and chain and with its chain settings, that
 * waits for two confirmations (CONFIRMATIONS=2): to it a transaction one block deep is one a reorg
 * can still take back. `chain` overrides more of the settings.
 */
export function startConfirmingApp(
  app: TestApp,
  options: Pick<TestAppOptions, 'masterKey' | 'chainRpcUrl'> & {
    chain?: Partial<Omit<AppConfig['chain'], 'confirmations'>>;
  } = {},
): Promise<TestApp> {
  return startTestApp({
    database: app.database,
    masterKey: options.masterKey,
    chainRpcUrl: options.chainRpcUrl ?? app.chain.rpcUrl,
    config: { chain: { ...app.config.chain, confirmations: 2, ...options.chain } },
  });
}

/** Tests are silent; CRAWLGATE_TEST_LOG=error (or warn, info, debug) shows the app's logs while debugging. */
function testLogLevel(): AppConfig['logLevel'] {
  const level = process.env.CRAWLGATE_TEST_LOG;
  return level === 'error' || level === 'warn' || level === 'info' || level === 'debug' ? level : 'silent';
}
