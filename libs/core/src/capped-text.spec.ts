import { BodyTooLargeError, cappedJson, cappedText } from './capped-text';

const streamOf = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe('cappedText', () => {
  it('reads a body up to the cap, multi-byte characters split across chunks included', async () => {
    const euro = new TextEncoder().encode('€');
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(euro.slice(0, 1));
        controller.enqueue(euro.slice(1));
        controller.close();
      },
    });
    expect(await cappedText(new Response(split), 3, 'it')).toBe('€');
    expect(await cappedText(new Response(streamOf('ab', 'cd')), 4, 'it')).toBe('abcd');
    expect(await cappedText(new Response(null), 4, 'it')).toBe('');
  });

  it('fails past the cap, counted in bytes, and on a declared length above it without reading', async () => {
    await expect(cappedText(new Response(streamOf('ab', 'cde')), 4, 'the body')).rejects.toThrow(
      new BodyTooLargeError('the body is larger than 4 bytes'),
    );
    await expect(cappedText(new Response('€€'), 5, 'it')).rejects.toBeInstanceOf(BodyTooLargeError);
    // Never ending, so only the declared length can end it.
    const declared = new Response(new ReadableStream<Uint8Array>(), { headers: { 'content-length': '5' } });
    await expect(cappedText(declared, 4, 'it')).rejects.toBeInstanceOf(BodyTooLargeError);
  });
});

describe('cappedJson', () => {
  it('parses a body up to the cap, and is undefined for a larger, empty or non-JSON one', async () => {
    expect(await cappedJson(new Response('{"a":1}'), 7)).toEqual({ a: 1 });
    expect(await cappedJson(new Response('{"a":1}'), 6)).toBeUndefined();
    expect(await cappedJson(new Response(''), 6)).toBeUndefined();
    expect(await cappedJson(new Response('{"a":'), 60)).toBeUndefined();
  });
});
