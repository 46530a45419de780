import { setFlagsFromString } from 'node:v8';
import { HEAP_GROWING_PERCENT, tuneV8ForServer } from './v8-tuning';

jest.mock('node:v8', () => ({ ...jest.requireActual('node:v8'), setFlagsFromString: jest.fn() }));
const flags = jest.mocked(setFlagsFromString);

describe('tuneV8ForServer', () => {
  beforeEach(() => flags.mockClear());

  it('on PostgreSQL, bounds the heap growth and keeps Prisma’s WebAssembly on the baseline tier', () => {
    tuneV8ForServer('postgres');
    expect(flags.mock.calls).toEqual([[`--heap-growing-percent=${HEAP_GROWING_PERCENT}`], ['--liftoff-only']]);
  });

  it('on PGlite, whose database is WebAssembly, only bounds the heap growth', () => {
    tuneV8ForServer('pglite');
    expect(flags.mock.calls).toEqual([[`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]]);
  });
});
