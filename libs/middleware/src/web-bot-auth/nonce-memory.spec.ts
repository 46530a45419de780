import { createNonceMemory } from './nonce-memory';

describe('createNonceMemory', () => {
  it('refuses a nonce seen before while it is valid, and forgets it once it expired', () => {
    let at = 1000;
    const nonces = createNonceMemory(10, () => at);
    expect(nonces.remember('a', 5000)).toBe('fresh');
    expect(nonces.remember('a', 5000)).toBe('replayed');
    expect(nonces.remember('b', 5000)).toBe('fresh');
    at = 5000;
    expect(nonces.remember('a', 9000)).toBe('fresh');
  });

  it('is full, not forgetful, when every remembered nonce is still valid', () => {
    let at = 0;
    const nonces = createNonceMemory(3, () => at);
    for (const key of ['a', 'b', 'c']) expect(nonces.remember(key, 10_000)).toBe('fresh');
    expect(nonces.remember('d', 10_000)).toBe('full');
    // The old ones are still refused: nothing was dropped to make room.
    expect(nonces.remember('a', 10_000)).toBe('replayed');
    expect(nonces.size).toBe(3);
    at = 10_000;
    expect(nonces.remember('d', 20_000)).toBe('fresh');
    expect(nonces.size).toBe(1);
  });

  it('keeps long keys as short hashes', () => {
    const nonces = createNonceMemory(5);
    expect(nonces.remember('x'.repeat(10_000), Date.now() + 1000)).toBe('fresh');
    expect(nonces.remember('x'.repeat(10_000), Date.now() + 1000)).toBe('replayed');
    expect(nonces.remember(`${'x'.repeat(9_999)}y`, Date.now() + 1000)).toBe('fresh');
  });
});
