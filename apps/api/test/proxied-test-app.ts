import { workerChain } from './test-chain';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app';
import { createProxiedTestDatabase } from './test-database';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

/** What a chunk on its way to PostgreSQL or to the chain's RPC meets: a promise holds it (tcp-proxy.ts). */
export type Tap = (text: string) => Promise<void> | void;

export interface ProxiedTestApp {
  app: TestApp;
  /** The next statements sent to PostgreSQL meet `tap`, until it is set again (undefined: none). */
  onStatement(tap: Tap | undefined): void;
  /** The next JSON-RPC requests meet `tap`, until it is set again. */
  onRpc(tap: Tap | undefined): void;
  /**
   * The chain RPC's proxy: cut() connections (a request then may have reached the node), refuse()
   * new ones (a request then provably never did), restore().
   */
  rpc: Pick<TcpProxy, 'cut' | 'refuse' | 'restore'>;
  close(): Promise<void>;
}

/**
 * An app whose PostgreSQL (a database of its own on the server, even on a PGlite run) and chain RPC
 * are reached through fault proxies, so a test can make a statement or a broadcast arrive late and
 * force an interleaving that timing alone finds only by chance.
 */
export async function startProxiedTestApp(
  options: Pick<TestAppOptions, 'config' | 'masterKey'> = {},
): Promise<ProxiedTestApp> {
  let statementTap: Tap | undefined;
  let rpcTap: Tap | undefined;
  const { db, proxy } = await createProxiedTestDatabase((chunk, direction) =>
    direction === 'to-target' ? statementTap?.(chunk.toString('latin1')) : undefined,
  );
  const rpc = new URL(workerChain().rpcUrl);
  const rpcProxy = await startTcpProxy(rpc.hostname, Number(rpc.port), {
    tap: (chunk, direction) => (direction === 'to-target' ? rpcTap?.(chunk.toString()) : undefined),
  });
  const app = await startTestApp({
    database: db.database,
    chainRpcUrl: `http://127.0.0.1:${rpcProxy.port}`,
    isolateChain: true,
    ...options,
  });
  return {
    app,
    onStatement: (tap) => void (statementTap = tap),
    onRpc: (tap) => void (rpcTap = tap),
    rpc: rpcProxy,
    async close() {
      statementTap = undefined;
      rpcTap = undefined;
      await app.close();
      await db.dispose();
      await proxy.close();
      await rpcProxy.close();
    },
  };
}
