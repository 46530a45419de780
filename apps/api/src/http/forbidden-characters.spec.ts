import { forbiddenCharacterItems } from './forbidden-characters';

const locs = (request: Parameters<typeof forbiddenCharacterItems>[0]) =>
  forbiddenCharacterItems(request).map((item) => item.loc);

describe('forbiddenCharacterItems', () => {
  it('finds nothing in clean text, numbers and nesting', () => {
    expect(
      forbiddenCharacterItems({ body: { a: [1, 'b', { c: null, d: true }], e: 'é 😀' }, query: { q: 'x' } }),
    ).toEqual([]);
  });

  it('names each value and field name holding one, the body first in document order, then the query, then the path', () => {
    const body = { name: 'a\u0000b', rules: [{ pattern: '/ok' }, 7, { pattern: '/x\u007f' }], ['k\u0085']: 1 };
    expect(locs({ params: { id: 'i\u0001' }, query: { q: ['ok', 'q\ud800'] }, body })).toEqual([
      ['body', 'k\u0085'],
      ['body', 'name'],
      ['body', 'rules', 2, 'pattern'],
      ['query', 'q', 1],
      ['path', 'id'],
    ]);
    const [item] = forbiddenCharacterItems({ body: 'ab\u0000' });
    expect(item).toEqual({
      loc: ['body'],
      type: 'forbidden_character',
      msg: 'Text must not contain control characters or lone surrogates (found U+0000 at position 2)',
    });
  });

  it('finds a string among many numbers deep down, and its place is whole', () => {
    let body: unknown = [...Array.from({ length: 50_000 }, (_, index) => index), 'deep\u0007'];
    for (let depth = 0; depth < 30; depth++) body = depth % 2 ? [body] : { next: body };
    const [loc] = locs({ body });
    expect(loc).toHaveLength(32);
    expect(loc.slice(0, 3)).toEqual(['body', 0, 'next']);
    expect(loc.at(-1)).toBe(50_000);
  });

  it('stops at ten items however many there are', () => {
    expect(forbiddenCharacterItems({ body: Array.from({ length: 1000 }, () => '\u0000') })).toHaveLength(10);
  });
});
