import { startTestApp, type TestApp } from '../../test/test-app';

describe('GET /v1/health', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('reports the database up, with its kind', async () => {
    const response = await app.call('GET', '/v1/health');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'ok',
      version: '0.1.0',
      database: { status: 'up', kind: process.env.DATABASE_URL ? 'postgres' : 'pglite' },
      rate_limits: 'in-process',
    });
  });

  it('reports 503 and the database down once it is unreachable', async () => {
    const other = await startTestApp();
    await other.database.close();
    const response = await other.call('GET', '/v1/health');
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: 'unavailable', database: { status: 'down' } });
    await other.close();
  });
});
