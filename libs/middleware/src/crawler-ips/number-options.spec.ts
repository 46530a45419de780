import { MAX_TIMER_MS, numberOptions } from './number-options';

describe('numberOptions', () => {
  it('reads a number within 1..max, and takes the default with a warning for anything else', () => {
    const warnings: string[] = [];
    const options = { a: 5, b: 0, c: Number.NaN, d: '7' as unknown as number, e: MAX_TIMER_MS + 1, f: undefined };
    const read = numberOptions(options, 'x.y', (message) => warnings.push(message));
    expect([read('a', 1), read('b', 2), read('c', 3), read('d', 4), read('e', 5, MAX_TIMER_MS), read('f', 6)]).toEqual([
      5, 2, 3, 4, 5, 6,
    ]);
    expect(warnings).toEqual([
      'x.y.b must be a number from 1 to 9007199254740991; using 2',
      'x.y.c must be a number from 1 to 9007199254740991; using 3',
      'x.y.d must be a number from 1 to 9007199254740991; using 4',
      `x.y.e must be a number from 1 to ${MAX_TIMER_MS}; using 5`,
    ]);
  });
});
