import { hasFieldKinds, untrusted, type FieldKinds } from './untrusted';

interface Sample {
  name: string;
  count: number;
  at: string | null;
  tags: string[];
  note?: string;
}

const KINDS: FieldKinds<Sample> = {
  name: ['string'],
  count: ['number'],
  at: ['string', 'null'],
  tags: ['array'],
  note: ['string', 'undefined'],
};

describe('untrusted', () => {
  it('takes a JSON object and nothing else', () => {
    expect(untrusted<Sample>({ name: 'a' })?.name).toBe('a');
    for (const value of [null, undefined, 'name', 1, true, [{ name: 'a' }]])
      expect(untrusted<Sample>(value)).toBe(undefined);
  });
});

describe('hasFieldKinds', () => {
  const good = { name: 'a', count: 1, at: null, tags: [], extra: { ignored: true } };

  it('accepts a body whose every field has a listed kind, optional ones absent', () => {
    expect(hasFieldKinds<Sample>(good, KINDS)).toBe(true);
    expect(hasFieldKinds<Sample>({ ...good, at: '2026-01-01T00:00:00.000Z', note: 'n' }, KINDS)).toBe(true);
  });

  it('refuses a missing field, a field of another kind, and anything not an object', () => {
    const { count: _count, ...withoutCount } = good;
    expect(hasFieldKinds<Sample>(withoutCount, KINDS)).toBe(false);
    expect(hasFieldKinds<Sample>({ ...good, count: '1' }, KINDS)).toBe(false);
    expect(hasFieldKinds<Sample>({ ...good, at: 0 }, KINDS)).toBe(false);
    expect(hasFieldKinds<Sample>({ ...good, tags: {} }, KINDS)).toBe(false);
    expect(hasFieldKinds<Sample>({ ...good, note: null }, KINDS)).toBe(false);
    for (const value of [null, 'body', [good]]) expect(hasFieldKinds<Sample>(value, KINDS)).toBe(false);
  });

  it('reads own fields only: an inherited one counts as absent', () => {
    expect(
      hasFieldKinds<Sample>(Object.assign(Object.create({ name: 'a' }), { count: 1, at: null, tags: [] }), KINDS),
    ).toBe(false);
  });
});

describe('FieldKinds (checked by tsc)', () => {
  it('lists every field of the type, with kinds the type allows', () => {
    // @ts-expect-error a field of the type left out
    const missing: FieldKinds<Sample> = { name: ['string'], count: ['number'], at: ['null'], tags: ['array'] };
    // @ts-expect-error a kind the field cannot have
    const wrongKind: FieldKinds<Sample> = { ...KINDS, count: ['string'] };
    // @ts-expect-error a field the type does not have
    const extra: FieldKinds<Sample> = { ...KINDS, size: ['number'] };
    expect([missing, wrongKind, extra]).toHaveLength(3);
  });
});
