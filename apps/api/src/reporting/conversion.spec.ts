import { formatConversion } from './conversion';

describe('conversion', () => {
  it.each([
    [0, 0, '0'],
    [3, 0, '0'],
    [0, 5, '0.0000'],
    [1, 4, '0.2500'],
    [2, 3, '0.6667'],
    [1, 3, '0.3333'],
    [1, 20000, '0.0001'], // exactly half a unit of the last place rounds up
    [1, 20001, '0.0000'],
    [7, 7, '1.0000'],
    [3, 2, '1.5000'],
  ])('%i paid of %i created is %s', (paid, created, expected) => {
    expect(formatConversion(paid, created)).toBe(expected);
  });
});
