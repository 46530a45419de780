import { inFlightLimit } from './in-flight-limit';

describe('inFlightLimit', () => {
  it('starts no call past the bound, and gives a slot back when a call resolves, rejects or throws', async () => {
    const limit = inFlightLimit(2);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const calls: string[] = [];
    const first = limit.run(() => (calls.push('a'), held));
    const second = limit.run(() => (calls.push('b'), Promise.reject(new Error('refused'))));
    expect(limit.run(() => (calls.push('c'), Promise.resolve()))).toBeUndefined();
    await expect(second).rejects.toThrow('refused');
    await expect(limit.run(() => (calls.push('d'), Promise.resolve('d')))).resolves.toBe('d');
    expect(() =>
      limit.run(() => {
        throw new Error('before any promise');
      }),
    ).toThrow('before any promise');
    release();
    await first;
    const again = [1, 2].map(() => limit.run(() => Promise.resolve()));
    expect(again.every((call) => call !== undefined)).toBe(true);
    await Promise.all(again);
    expect(calls).toEqual(['a', 'b', 'd']);
  });
});
