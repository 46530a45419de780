import {
  formatWalletProof,
  isWalletProofTimely,
  MAX_WALLET_PROOF_LENGTH,
  paymentHistoryMessage,
  readWalletProof,
  WALLET_PROOF_MAX_SECONDS,
} from './wallet-proof';

describe('wallet proof', () => {
  const signature = `0x${'ab'.repeat(65)}` as const;

  it('signs the lower-cased address and the expiry, so any spelling of the address signs the same text', () => {
    const address = '0xAbCdEf0123456789aBcDeF0123456789ABCDEF01';
    expect(paymentHistoryMessage(address, 'https://api.crawlgate.example', 1_800_000_000)).toBe(
      'Crawlgate payment history of 0xabcdef0123456789abcdef0123456789abcdef01 at https://api.crawlgate.example until 1800000000',
    );
  });

  it('reads back what it formats', () => {
    expect(readWalletProof(formatWalletProof(1_800_000_000, signature))).toEqual({ expires: 1_800_000_000, signature });
  });

  it.each([
    ['no expiry', `.${signature}`],
    ['no signature', '1800000000.'],
    ['a signature without 0x', `1800000000.${'ab'.repeat(65)}`],
    ['an odd number of hex digits', `1800000000.${signature}a`],
    ['a negative expiry', `-1800000000.${signature}`],
    ['a fractional expiry', `1800000000.5.${signature}`],
    ['a leading zero', `01800000000.${signature}`],
    ['an expiry in exponent form', `18e8.${signature}`],
    ['spaces', ` 1800000000.${signature}`],
    ['too long', `1800000000.0x${'ab'.repeat(MAX_WALLET_PROOF_LENGTH)}`],
  ])('reads nothing from %s', (_, header) => {
    expect(readWalletProof(header)).toBeUndefined();
  });

  it('is timely after now and up to WALLET_PROOF_MAX_SECONDS ahead, never at or before now', () => {
    const now = 1_800_000_000;
    expect(isWalletProofTimely(now + 1, now)).toBe(true);
    expect(isWalletProofTimely(now + WALLET_PROOF_MAX_SECONDS, now)).toBe(true);
    expect(isWalletProofTimely(now, now)).toBe(false);
    expect(isWalletProofTimely(now - 1, now)).toBe(false);
    expect(isWalletProofTimely(now + WALLET_PROOF_MAX_SECONDS + 1, now)).toBe(false);
  });
});
