import { batchedLookup } from './batched-lookup';

/** A loader that records each statement's keys and answers from a table. */
function recordingLoader(table: Record<string, number>) {
  const statements: string[][] = [];
  const load = async (keys: string[]) => {
    statements.push(keys);
    return new Map(keys.filter((key) => key in table).map((key) => [key, table[key]]));
  };
  return { statements, load };
}

describe('batchedLookup', () => {
  it('looks up the keys asked for together in one statement, each caller getting its own key', async () => {
    const { statements, load } = recordingLoader({ a: 1, b: 2, c: 3 });
    const lookup = batchedLookup(load);
    const found = await Promise.all([lookup('a'), lookup('b'), lookup('missing'), lookup('c')]);
    expect(found).toEqual([1, 2, undefined, 3]);
    expect(statements).toEqual([['a', 'b', 'missing', 'c']]);
  });

  it('asks for a key once however many callers wait for it', async () => {
    const { statements, load } = recordingLoader({ a: 1 });
    const lookup = batchedLookup(load);
    expect(await Promise.all([lookup('a'), lookup('a'), lookup('a')])).toEqual([1, 1, 1]);
    expect(statements).toEqual([['a']]);
  });

  it('looks up again for a later caller: nothing is cached between statements', async () => {
    const table: Record<string, number> = { a: 1 };
    const { statements, load } = recordingLoader(table);
    const lookup = batchedLookup(load);
    expect(await lookup('a')).toBe(1);
    table.a = 2; // committed in between: the next caller must see it
    expect(await lookup('a')).toBe(2);
    delete table.a;
    expect(await lookup('a')).toBeUndefined();
    expect(statements).toEqual([['a'], ['a'], ['a']]);
  });

  it('starts a statement as soon as it holds the most keys allowed', async () => {
    const { statements, load } = recordingLoader({});
    const lookup = batchedLookup(load, 2);
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map(lookup));
    expect(statements).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('fails every caller of a failed statement with its error, and only those', async () => {
    let fail = true;
    const lookup = batchedLookup(async (keys: string[]) => {
      if (fail) throw new Error('database down');
      return new Map(keys.map((key) => [key, key.length]));
    });
    const first = await Promise.allSettled([lookup('a'), lookup('bb')]);
    expect(first).toEqual([
      { status: 'rejected', reason: new Error('database down') },
      { status: 'rejected', reason: new Error('database down') },
    ]);
    fail = false;
    expect(await lookup('bb')).toBe(2);
  });
});
