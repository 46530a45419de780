import { formatRatio, formatUsd, usdToMicros } from './money';

describe('money', () => {
  it('reads the API decimal strings exactly, without floats', () => {
    expect(usdToMicros('0.005')).toBe(5_000n);
    expect(usdToMicros('12.5')).toBe(12_500_000n);
    expect(usdToMicros('0.1') + usdToMicros('0.2')).toBe(300_000n);
    expect(() => usdToMicros('abc')).toThrow(RangeError);
  });

  it('formats micro-USD with the exact decimals and grouped thousands', () => {
    expect(formatUsd(0n)).toBe('$0');
    expect(formatUsd(5_000n)).toBe('$0.005');
    expect(formatUsd(1_250_500_000n)).toBe('$1,250.5');
    expect(formatUsd(1_234_567_000_001n)).toBe('$1,234,567.000001');
  });

  it('shows a ratio as a percentage', () => {
    expect(formatRatio(0.25)).toBe('25.0%');
    expect(formatRatio(0)).toBe('0.0%');
    expect(formatRatio(null)).toBe('–');
    expect(formatRatio(1)).toBe('100.0%');
  });
});
