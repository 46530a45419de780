import { createNonceMemory } from './nonce-memory';

const AGENT = 'https://agent.example';

describe('createNonceMemory', () => {
  it('refuses a nonce seen before while it is valid, and forgets it once it expired', () => {
    let at = 1000;
    const nonces = createNonceMemory(10, () => at, 1);
    expect(nonces.remember(AGENT, 'a', 5000)).toBe('fresh');
    expect(nonces.remember(AGENT, 'a', 5000)).toBe('replayed');
    expect(nonces.remember(AGENT, 'b', 5000)).toBe('fresh');
    // The same nonce from another signer is another nonce.
    expect(nonces.remember('https://other.example', 'a', 5000)).toBe('fresh');
    at = 5000;
    expect(nonces.remember(AGENT, 'a', 9000)).toBe('fresh');
  });

  it('keeps half of the memory for known signers, however many other origins fill the rest', () => {
    const known = 'https://chatgpt.com';
    const nonces = createNonceMemory(20, () => 0, 1 / 4, new Set([known]));
    const fresh: number[] = [];
    for (let origin = 0; origin < 10; origin++) {
      fresh.push(0);
      for (let i = 0; i < 10; i++)
        if (nonces.remember(`https://o${origin}.example`, `${i}`, 10_000) === 'fresh') fresh[origin]++;
    }
    // The others' half (10 nonces), a quarter of it each: five origins fill it, not two.
    expect(fresh).toEqual([2, 2, 2, 2, 2, 0, 0, 0, 0, 0]);
    for (let i = 0; i < 10; i++) expect(nonces.remember(known, `${i}`, 10_000)).toBe('fresh');
    expect(nonces.remember(known, 'one more', 10_000)).toBe('full');
    expect(nonces.remember(known, '0', 10_000)).toBe('replayed');
  });

  it('is full, not forgetful, when every remembered nonce is still valid', () => {
    let at = 0;
    const nonces = createNonceMemory(3, () => at, 1);
    for (const key of ['a', 'b', 'c']) expect(nonces.remember(AGENT, key, 10_000)).toBe('fresh');
    expect(nonces.remember(AGENT, 'd', 10_000)).toBe('full');
    // The old ones are still refused: nothing was dropped to make room.
    expect(nonces.remember(AGENT, 'a', 10_000)).toBe('replayed');
    expect(nonces.size).toBe(3);
    at = 10_000;
    expect(nonces.remember(AGENT, 'd', 20_000)).toBe('fresh');
    expect(nonces.size).toBe(1);
  });

  it('lets one signer hold only its share, so it cannot leave the others unverified', () => {
    let at = 0;
    const nonces = createNonceMemory(8, () => at, 1 / 4);
    expect(nonces.remember('https://flood.example', '1', 10_000)).toBe('fresh');
    expect(nonces.remember('https://flood.example', '2', 10_000)).toBe('fresh');
    expect(nonces.remember('https://flood.example', '3', 10_000)).toBe('full');
    for (const key of ['a', 'b']) expect(nonces.remember(AGENT, key, 10_000)).toBe('fresh');
    at = 10_000; // the flood's nonces expired: its share is free again
    expect(nonces.remember('https://flood.example', '3', 20_000)).toBe('fresh');
  });

  it('frees each expired nonce without walking the others: a signer cannot make every request a walk of the memory', () => {
    // A full memory whose nonces expire one per millisecond: each request frees one (a walk of all before).
    const capacity = 50_000;
    let at = 0;
    const nonces = createNonceMemory(capacity, () => at, 1);
    const filling = new Set<string>();
    for (let i = 1; i <= capacity; i++) filling.add(nonces.remember(AGENT, `old ${i}`, i));
    const answers = new Set<string>();
    for (at = 1; at <= capacity; at++) answers.add(nonces.remember(AGENT, `new ${at}`, 10 * capacity));
    expect({ filling: [...filling], answers: [...answers] }).toEqual({ filling: ['fresh'], answers: ['fresh'] });
    expect(nonces.size).toBe(capacity);
    expect(nonces.remember(AGENT, 'new 1', 10 * capacity)).toBe('replayed');
  }, 20_000);

  it('remembers no nonce under an expiry it cannot order: it answers full, so its request is not verified', () => {
    const memory = createNonceMemory(4, () => 1_000);
    for (const expiry of [Number.NaN, Infinity, -Infinity]) expect(memory.remember('a', 'n', expiry)).toBe('full');
    expect(memory.size).toBe(0);
    // The memory still orders, refuses and frees what it holds.
    expect(memory.remember('a', 'n', 2_000)).toBe('fresh');
    expect(memory.remember('a', 'n', 2_000)).toBe('replayed');
  });

  it('keeps long keys as short hashes', () => {
    const nonces = createNonceMemory(5, Date.now, 1);
    expect(nonces.remember(AGENT, 'x'.repeat(10_000), Date.now() + 1000)).toBe('fresh');
    expect(nonces.remember(AGENT, 'x'.repeat(10_000), Date.now() + 1000)).toBe('replayed');
    expect(nonces.remember(AGENT, `${'x'.repeat(9_999)}y`, Date.now() + 1000)).toBe('fresh');
  });
});
