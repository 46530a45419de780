import { base64urlEncode, utf8Encode } from '@crawlgate/core';
import { decodeCursor, encodeCursor } from './cursor';

const ID = '0b6f5a52-3c1e-4f0e-9a57-2b1d8c9e7f10';
const encodeText = (text: string) => base64urlEncode(utf8Encode(text));

describe('payment page cursor', () => {
  it('round-trips the time to the millisecond and the id', () => {
    const at = new Date('2026-11-02T10:20:30.456Z');
    const text = encodeCursor({ at, id: ID });
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual({ at, id: ID });
  });

  it('round-trips the epoch itself', () => {
    expect(decodeCursor(encodeCursor({ at: new Date(0), id: ID }))).toEqual({ at: new Date(0), id: ID });
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/=='],
    ['padded', `${encodeCursor({ at: new Date(1), id: ID })}=`],
    ['no separator', encodeText(`1700000000000${ID}`)],
    ['not a number', encodeText(`soon:${ID}`)],
    ['a negative time', encodeText(`-1:${ID}`)],
    ['a time of more than 15 digits', encodeText(`9999999999999999:${ID}`)],
    ['not a uuid', encodeText('1700000000000:0b6f5a52-3c1e-4f0e-9a57-2b1d8c9e7f1z')],
    ['trailing text', encodeText(`1700000000000:${ID}:x`)],
    ['invalid UTF-8', base64urlEncode(new Uint8Array([0xff, 0xfe]))],
  ])('rejects %s', (_, text) => {
    expect(decodeCursor(text)).toBeNull();
  });
});
