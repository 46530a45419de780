import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { GateCounterService } from './gate-counter.service';

describe('GateCounterService', () => {
  let db: TestDatabase;
  let siteId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    const publisher = await db.database.prisma.publisher.create({
      data: { email: 'counter@example.com', passwordHash: 'x', apiKeyHash: 'c'.repeat(64) },
    });
    siteId = (
      await db.database.prisma.site.create({
        data: { publisherId: publisher.id, domain: 'counter.example.com', siteTokenHash: 'd'.repeat(64) },
      })
    ).id;
  });
  afterAll(() => db.dispose());

  const countsByDay = async () =>
    Object.fromEntries(
      (await db.database.prisma.siteDailyCount.findMany({ where: { siteId }, orderBy: { day: 'asc' } })).map((row) => [
        row.day.toISOString().slice(0, 10),
        row.gatesCreated,
      ]),
    );

  it('counts each gate on its own UTC day, across midnight and back to a day already counted', async () => {
    const counter = new GateCounterService(db.database);
    const midnight = Date.parse('2026-11-28T00:00:00.000Z');
    for (const at of [midnight - 1, midnight - 1, midnight, midnight + 86_399_999, midnight + 86_400_000, midnight - 2])
      counter.count(siteId, at);
    await counter.onApplicationShutdown();
    expect(await countsByDay()).toEqual({ '2026-11-27': 3, '2026-11-28': 2, '2026-11-29': 1 });
  });
});
