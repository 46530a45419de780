import { transferProofMessage } from './transfer-proof';

describe('transferProofMessage', () => {
  const ref = '0b5d2f4e-8c1a-4f6e-9d3b-7a2c1e0f9b84';
  const hash = `0x${'ab'.repeat(32)}`;

  it('names the gate and the transaction', () => {
    expect(transferProofMessage(ref, hash)).toBe(`Crawlgate transfer proof\ngate: ${ref}\ntx: ${hash}`);
  });

  it('is the same text whatever the hex case, so a checksummed spelling signs the same proof', () => {
    expect(transferProofMessage(ref.toUpperCase(), hash.toUpperCase().replace('0X', '0x'))).toBe(
      transferProofMessage(ref, hash),
    );
  });
});
