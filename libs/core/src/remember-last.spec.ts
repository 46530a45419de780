import { rememberLast } from './remember-last';

describe('rememberLast', () => {
  it('keeps at most `max` entries, dropping the one set least recently', () => {
    const map = new Map<string, number>();
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      rememberLast(map, key, value, 3);
    rememberLast(map, 'a', 10, 3); // set again: last in the order now
    rememberLast(map, 'd', 4, 3);
    expect([...map]).toEqual([
      ['c', 3],
      ['a', 10],
      ['d', 4],
    ]);
  });
});
