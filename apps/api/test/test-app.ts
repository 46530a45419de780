import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { revert, snapshot } from '@crawlgate/devchain';
import { randomBytes } from 'node:crypto';
import { createApp } from '../src/app/create-app';
import { loadConfig, type AppConfig } from '../src/config/config';
import type { ChainContext } from '../src/chain/chain-context';
import type { Database } from '../src/db/database';
import { testChainConfig, testChainContext } from './test-chain';
import { createTestDatabase } from './test-database';

export interface TestApp {
  /** e.g. http://127.0.0.1:41234 — a real listening server on loopback. */
  baseUrl: string;
  app: NestFastifyApplication;
  database: Database;
  config: AppConfig;
  chain: ChainContext;
  /** fetch against the app: JSON in, parsed JSON out. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (not JSON-encoded) when a string with rawBody: true. */
  rawBody?: boolean;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
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
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const owned = options.database ? undefined : await createTestDatabase();
  const database = options.database ?? owned!.database;
  const { chain: chainOverrides, ...overrides } = options.config ?? {};
  const config: AppConfig = { ...loadConfig({}), logLevel: testLogLevel(), redisUrl: undefined, trustProxy: true, ...overrides, chain: testChainConfig(chainOverrides) };
  const chain = testChainContext(config.chain, options.chainRpcUrl);
  const chainSnapshot = options.isolateChain ? await snapshot(chain.rpcUrl) : undefined;
  const app = await createApp({ config, database, chain, masterKey: options.masterKey ?? randomBytes(32), redisPrefix: options.redisPrefix });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;

  return {
    baseUrl,
    app,
    database,
    config,
    chain,
    async call(method, path, { body, rawBody, headers = {} } = {}) {
      const hasBody = body !== undefined;
      const response = await fetch(baseUrl + path, {
        method,
        headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...headers },
        body: hasBody ? (rawBody ? (body as string) : JSON.stringify(body)) : undefined,
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
    async close() {
      await app.close();
      if (chainSnapshot) await revert(chain.rpcUrl, chainSnapshot);
      await owned?.dispose();
    },
  };
}

/** Tests are silent; CRAWLGATE_TEST_LOG=error (or warn, info, debug) shows the app's logs while debugging. */
function testLogLevel(): AppConfig['logLevel'] {
  const level = process.env.CRAWLGATE_TEST_LOG;
  return level === 'error' || level === 'warn' || level === 'info' || level === 'debug' ? level : 'silent';
}
