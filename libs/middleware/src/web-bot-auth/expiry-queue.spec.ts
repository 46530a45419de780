import { createExpiryQueue } from './expiry-queue';

describe('createExpiryQueue', () => {
  it('hands over what expired at or before the time asked, soonest first, and keeps the rest', () => {
    const queue = createExpiryQueue<string>();
    const expiries = [50, 10, 40, 10, 30, 20, 60, 5];
    expiries.forEach((expiry, i) => queue.add(`k${i}`, expiry));
    const taken: [string, number][] = [];
    queue.takeExpired(30, (key, expiry) => taken.push([key, expiry]));
    expect(taken.map(([, expiry]) => expiry)).toEqual([5, 10, 10, 20, 30]);
    expect(taken.map(([key]) => key).sort()).toEqual(['k1', 'k3', 'k4', 'k5', 'k7']);
    expect(queue.size).toBe(3);
    taken.length = 0;
    queue.takeExpired(29, (key, expiry) => taken.push([key, expiry]));
    expect(taken).toEqual([]);
    queue.takeExpired(Infinity, (key, expiry) => taken.push([key, expiry]));
    expect(taken).toEqual([
      ['k2', 40],
      ['k0', 50],
      ['k6', 60],
    ]);
    expect(queue.size).toBe(0);
  });

  it('orders any sequence as a sort would', () => {
    const queue = createExpiryQueue<number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const expiries = Array.from({ length: 2000 }, () => random() % 500);
    expiries.forEach((expiry, i) => queue.add(i, expiry));
    const taken: number[] = [];
    for (let at = 0; at < 500; at += 37) queue.takeExpired(at, (_, expiry) => taken.push(expiry));
    queue.takeExpired(Infinity, (_, expiry) => taken.push(expiry));
    expect(taken).toEqual([...expiries].sort((a, b) => a - b));
  });
});
