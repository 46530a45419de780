import { DEV_ROLES, devTestClient } from '@crawlgate/devchain';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('GET /v1/health', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('reports the database up, with its kind, and the chain: its head and the relayer’s gas', async () => {
    const response = await app.call('GET', '/v1/health');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      version: '0.1.0',
      database: { status: 'up', kind: process.env.DATABASE_URL ? 'postgres' : 'pglite' },
      chain: { status: 'up', network: 'local', relayer: { address: DEV_ROLES.relayer.address, low: false } },
      rate_limits: 'in-process',
    });
    const { chain } = response.body;
    expect(chain.block).toBe(Number(await app.chain.publicClient.getBlockNumber()));
    expect(chain.block_age_seconds).toBeGreaterThanOrEqual(0);
    const balance = await app.chain.publicClient.getBalance({ address: DEV_ROLES.relayer.address });
    expect(chain.relayer.balance_wei).toBe(balance.toString());
    expect(BigInt(chain.relayer.settlements_left)).toBeGreaterThan(1_000n);
  });

  it('reads the chain at most once every few seconds, however often it is asked', async () => {
    const other = await startTestApp();
    const reads = jest.spyOn(other.chain.publicClient, 'getBlock');
    try {
      await Promise.all([other.call('GET', '/v1/health'), other.call('GET', '/v1/health')]);
      await other.call('GET', '/v1/health');
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
      await other.close();
    }
  });

  it('is degraded, not down, when the chain’s node does not answer, and never shows the node’s URL', async () => {
    const other = await startTestApp({ chainRpcUrl: 'http://127.0.0.1:1/v2/secret-node-key' });
    try {
      const response = await other.call('GET', '/v1/health');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        status: 'degraded',
        database: { status: 'up' },
        chain: { status: 'down', relayer: { address: DEV_ROLES.relayer.address }, error: expect.any(String) },
      });
      expect(JSON.stringify(response.body)).not.toContain('secret-node-key');
    } finally {
      await other.close();
    }
  });

  it('is degraded when the relayer has gas for fewer than a thousand settlements', async () => {
    const other = await startTestApp({ isolateChain: true });
    try {
      const gasPrice = await other.chain.publicClient.getGasPrice();
      await devTestClient(other.chain.rpcUrl).setBalance({
        address: DEV_ROLES.relayer.address,
        value: gasPrice * 100_000n * 999n,
      });
      const response = await other.call('GET', '/v1/health');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        status: 'degraded',
        chain: { status: 'up', relayer: { settlements_left: '999', low: true } },
      });
    } finally {
      await other.close();
    }
  });

  it('reports 503 and the database down once it is unreachable', async () => {
    const other = await startTestApp();
    try {
      await other.database.close();
      const response = await other.call('GET', '/v1/health');
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({
        status: 'unavailable',
        database: { status: 'down' },
        detail: 'The database is unavailable; retry later',
      });
      // Never the driver's text: it can name the database's host, port and user to anyone asking.
      expect(response.body.database.error).toBe('the database did not answer');
    } finally {
      await other.close();
    }
  });
});
