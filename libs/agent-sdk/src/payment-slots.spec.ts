import { HeldPages, MAX_HELD_PER_DOMAIN, MAX_HELD_PER_HOST } from './held-authorizations';
import { PaymentSlots } from './payment-slots';

const HOUR = 3_600_000;
const settled = async <T>(promise: Promise<T>) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 20))]);

describe('PaymentSlots', () => {
  it('lets a host have as many payments under way as it may hold, the next waiting until one ends', async () => {
    const slots = new PaymentSlots();
    const held = new HeldPages();
    const taken = await Promise.all(Array.from({ length: MAX_HELD_PER_HOST }, () => slots.take('a.example', held)));
    expect(taken.every((free) => typeof free === 'function')).toBe(true);
    const next = slots.take('a.example', held);
    expect(await settled(next)).toBe(false);
    // Another host is not held back.
    expect(typeof (await slots.take('b.other', held))).toBe('function');
    taken[0]!();
    taken[0]!(); // freed once, however often called
    expect(typeof (await next)).toBe('function');
    expect(await settled(slots.take('a.example', held))).toBe(false);
  });

  it('counts the pages the host holds, and answers null once they leave no slot', async () => {
    const slots = new PaymentSlots();
    const held = new HeldPages();
    for (let i = 1; i < MAX_HELD_PER_HOST; i++) held.keep(`https://a.example/${i}`, Date.now() + HOUR);
    const last = await slots.take('a.example', held);
    expect(typeof last).toBe('function');
    expect(await settled(slots.take('a.example', held))).toBe(false);
    held.keep('https://a.example/3', Date.now() + HOUR);
    expect(await slots.take('a.example', held)).toBeNull();
  });

  it('counts a domain’s hosts together', async () => {
    const slots = new PaymentSlots();
    const held = new HeldPages();
    const taken = await Promise.all(
      Array.from({ length: MAX_HELD_PER_DOMAIN }, (_, i) => slots.take(`p${i}.evil.example`, held)),
    );
    expect(taken.every((free) => typeof free === 'function')).toBe(true);
    expect(await settled(slots.take('p99.evil.example', held))).toBe(false);
  });

  it('stops waiting when the caller gives up', async () => {
    const slots = new PaymentSlots();
    const held = new HeldPages();
    await Promise.all(Array.from({ length: MAX_HELD_PER_HOST }, () => slots.take('a.example', held)));
    const giveUp = new AbortController();
    const waiting = slots.take('a.example', held, giveUp.signal);
    giveUp.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
  });
});
