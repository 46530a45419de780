import { whenIdle } from './when-idle';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('whenIdle', () => {
  it('runs once for all the asks made before the event loop is idle, and again for later ones', async () => {
    let runs = 0;
    const schedule = whenIdle(() => runs++);
    schedule();
    schedule();
    schedule();
    expect(runs).toBe(0);
    await nextTurn();
    expect(runs).toBe(1);
    schedule();
    await nextTurn();
    expect(runs).toBe(2);
  });
});
