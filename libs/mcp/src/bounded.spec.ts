import { bounded, MAX_REFUSAL_CHARS, MAX_REFUSAL_ITEMS } from './bounded';

describe('bounded', () => {
  it('cuts long strings and long lists at any depth, and leaves the rest as it is', () => {
    const long = 'x'.repeat(1_000_000);
    const result = bounded({ code: 'c', n: 1, ok: null, detail: long, list: Array(2000).fill({ reason: long }) });
    expect(result.code).toBe('c');
    expect(result.n).toBe(1);
    expect(result.ok).toBeNull();
    expect(result.detail).toBe(`${'x'.repeat(MAX_REFUSAL_CHARS - 1)}…`);
    expect(result.list).toHaveLength(MAX_REFUSAL_ITEMS);
    expect(result.list[0].reason).toHaveLength(MAX_REFUSAL_CHARS);
    expect(JSON.stringify(result).length).toBeLessThan(20_000);
  });
});
