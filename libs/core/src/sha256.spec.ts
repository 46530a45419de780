import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { sha256Text } from './sha256';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const nodeSha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('sha256Text', () => {
  it.each([
    // FIPS 180-4 examples (NIST's "SHA256.pdf"): one block, and two after padding.
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
  ])('gives the published digest of %j', (text, expected) => {
    expect(hex(sha256Text(text))).toBe(expected);
  });

  it('agrees with node:crypto on ASCII text of every length around the block and padding edges', () => {
    for (let length = 0; length <= 300; length++) {
      const text = 'abcdefghij'.repeat(31).slice(0, length);
      expect(hex(sha256Text(text))).toBe(nodeSha256(text));
    }
  });

  it('hashes the UTF-8 of text that is not ASCII, wherever the first wide character falls', () => {
    for (const wide of ['é', '€', '😀', '\u0080', '\uffff', '\ud800'])
      for (const at of [0, 1, 55, 63, 64, 65, 127, 128, 200]) {
        const text = 'a'.repeat(at) + wide + 'b'.repeat(70);
        expect(hex(sha256Text(text))).toBe(nodeSha256(text));
      }
  });

  it('agrees with node:crypto on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400, unit: 'binary' }), (text) => {
        expect(hex(sha256Text(text))).toBe(nodeSha256(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what is not a string, where reading code units would hash it like some string', () => {
    for (const odd of [[], {}, 42, null, undefined])
      expect(() => sha256Text(odd as unknown as string)).toThrow(TypeError);
  });
});
