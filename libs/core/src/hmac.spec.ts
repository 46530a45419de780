import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { hmacSha256, MAX_KEYED_STATES } from './hmac';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const nodeHmac = (secret: string, message: string) => createHmac('sha256', secret).update(message).digest('hex');

describe('hmacSha256', () => {
  it.each([
    // RFC 4231, test cases 1 and 2 (their keys are text).
    ['\x0b'.repeat(20), 'Hi There', 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    ['Jefe', 'what do ya want for nothing?', '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
  ])('gives the RFC 4231 MAC for key %j', (key, message, expected) => {
    expect(hex(hmacSha256(key, message))).toBe(expected);
  });

  it('agrees with node:crypto on ASCII messages of every length around the block and padding edges', () => {
    const secret = 'cgsec_' + 'k'.repeat(43);
    for (let length = 0; length <= 300; length++) {
      const message = 'abcdefghij'.repeat(31).slice(0, length);
      expect(hex(hmacSha256(secret, message))).toBe(nodeHmac(secret, message));
    }
  });

  it('hashes the UTF-8 of text that is not ASCII, wherever the first wide character falls', () => {
    const secret = 'site-secret';
    for (const wide of ['é', '€', '😀', '\u0100', '\uffff', '\ud800']) {
      for (const at of [0, 1, 55, 63, 64, 65, 127, 128, 200]) {
        const message = 'a'.repeat(at) + wide + 'b'.repeat(70);
        expect(hex(hmacSha256(secret, message))).toBe(nodeHmac(secret, message));
      }
    }
  });

  it('agrees with node:crypto on any secret and message, keys longer than a block included', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 150, unit: 'binary' }),
        fc.string({ maxLength: 400, unit: 'binary' }),
        (secret, message) => {
          expect(hex(hmacSha256(secret, message))).toBe(nodeHmac(secret, message));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keys of 64 and 65 bytes: a block exactly, and one byte over, which is hashed first', () => {
    for (const secret of ['k'.repeat(64), 'k'.repeat(65), 'é'.repeat(32), 'é'.repeat(33)])
      expect(hex(hmacSha256(secret, 'message'))).toBe(nodeHmac(secret, 'message'));
  });

  it('keeps answering right for a secret after more secrets than its cache holds', () => {
    const first = hex(hmacSha256('secret-0', 'message'));
    for (let i = 1; i <= MAX_KEYED_STATES + 10; i++)
      expect(hex(hmacSha256(`secret-${i}`, 'message'))).toBe(nodeHmac(`secret-${i}`, 'message'));
    expect(hex(hmacSha256('secret-0', 'message'))).toBe(first);
    expect(first).toBe(nodeHmac('secret-0', 'message'));
  });

  it('leaves no state behind: the same MAC twice, and one MAC per secret when interleaved', () => {
    const a = hex(hmacSha256('a', 'x'.repeat(130)));
    hmacSha256('b', 'é'.repeat(90));
    expect(hex(hmacSha256('a', 'x'.repeat(130)))).toBe(a);
    expect(a).toBe(nodeHmac('a', 'x'.repeat(130)));
  });

  it('refuses what is not a string, where reading code units would hash it like some string', () => {
    for (const odd of [[], {}, 42, null, undefined])
      expect(() => hmacSha256('secret', odd as unknown as string)).toThrow(TypeError);
    expect(() => hmacSha256([] as unknown as string, 'message')).toThrow(TypeError);
  });
});
