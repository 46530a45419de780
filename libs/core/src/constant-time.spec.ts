import fc from 'fast-check';
import { constantTimeEqual } from './constant-time';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('constantTimeEqual', () => {
  it('is true for equal bytes, empty ones included', () => {
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(bytes(), bytes())).toBe(true);
  });

  it('is false when any byte differs, wherever it is', () => {
    expect(constantTimeEqual(bytes(0, 2, 3), bytes(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(bytes(0x80), bytes(0x00))).toBe(false);
  });

  it('is false when lengths differ, even if one is a prefix of the other', () => {
    expect(constantTimeEqual(bytes(1, 2), bytes(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2, 0), bytes(1, 2))).toBe(false);
    expect(constantTimeEqual(bytes(), bytes(0))).toBe(false);
    expect(constantTimeEqual(bytes(0), bytes())).toBe(false);
  });

  it('agrees with a plain comparison', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
        expect(constantTimeEqual(a, b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(constantTimeEqual(a, a.slice())).toBe(true);
      }),
    );
  });
});
