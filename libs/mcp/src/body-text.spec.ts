import { isTextual, readBodyText } from './body-text';

/** A response whose body comes in `chunks`, counting how many were pulled. */
function streamed(chunks: Uint8Array[], contentType: string | null) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === chunks.length) return controller.close();
        controller.enqueue(chunks[pulled++]);
      },
    },
    { highWaterMark: 0 },
  ); // pulled only when read
  const response = new Response(body, { headers: contentType === null ? {} : { 'content-type': contentType } });
  if (contentType === null) response.headers.delete('content-type');
  return { response, pulled: () => pulled };
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('readBodyText', () => {
  it('reads a short text body whole', async () => {
    expect(
      await readBodyText(new Response('<h1>hi</h1>', { headers: { 'content-type': 'text/html; charset=utf-8' } }), 100),
    ).toEqual({ text: '<h1>hi</h1>', truncated: false });
  });

  it('stops reading once it has more than it will show', async () => {
    const body = streamed(
      Array.from({ length: 1000 }, () => utf8('0123456789')),
      'text/plain',
    );
    expect(await readBodyText(body.response, 25)).toEqual({ text: '0123456789012345678901234', truncated: true });
    expect(body.pulled()).toBeLessThan(10);
  });

  it('says a body of exactly the bound is whole', async () => {
    expect(await readBodyText(new Response('12345', { headers: { 'content-type': 'text/plain' } }), 5)).toEqual({
      text: '12345',
      truncated: false,
    });
  });

  it('decodes characters split across chunks, and never cuts a surrogate pair in two', async () => {
    const bytes = utf8('é😀x');
    const body = streamed([bytes.slice(0, 1), bytes.slice(1, 4), bytes.slice(4)], 'text/plain; charset=UTF-8');
    expect(await readBodyText(body.response, 10)).toEqual({ text: 'é😀x', truncated: false });
    expect(await readBodyText(new Response('a😀b', { headers: { 'content-type': 'text/plain' } }), 2)).toEqual({
      text: 'a',
      truncated: true,
    });
  });

  it('decodes the charset the server names, and UTF-8 when it names none or one unknown', async () => {
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
    expect(
      await readBodyText(new Response(latin1, { headers: { 'content-type': 'text/plain; charset="iso-8859-1"' } }), 10),
    ).toEqual({ text: 'café', truncated: false });
    expect(
      await readBodyText(
        new Response(utf8('café'), { headers: { 'content-type': 'text/plain; charset=no-such-charset' } }),
        10,
      ),
    ).toEqual({ text: 'café', truncated: false });
  });

  it('does not decode a binary body, and does not read it', async () => {
    const body = streamed([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], 'image/png');
    expect(await readBodyText(body.response, 100)).toEqual({ text: null, truncated: false });
    expect(body.pulled()).toBe(0);
  });
});

describe('isTextual', () => {
  it.each([
    ['text/html; charset=utf-8', true],
    ['application/json', true],
    ['application/ld+json', true],
    ['application/rss+xml', true],
    ['application/xml', true],
    ['application/javascript', true],
    [null, true],
    ['', true],
    ['image/png', false],
    ['application/pdf', false],
    ['application/octet-stream', false],
    ['application/jsonp-garbage', false],
  ])('%j → %s', (type, textual) => {
    expect(isTextual(type)).toBe(textual);
  });
});

describe('readBodyText with a signal or a deadline', () => {
  it('stops a body that never ends past its deadline, letting go of it', async () => {
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(utf8('a trickle'));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const response = new Response(body, { headers: { 'content-type': 'text/plain' } });
    const started = Date.now();
    await expect(readBodyText(response, 1000, { timeoutMs: 50 })).rejects.toMatchObject({
      name: 'TimeoutError',
      message: 'the body did not finish within 0.05 s',
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(cancelled).toMatchObject({ name: 'TimeoutError' });
  });

  it('reads a whole body as before when its signal never aborts', async () => {
    const response = new Response('whole', { headers: { 'content-type': 'text/plain' } });
    expect(await readBodyText(response, 100, { signal: new AbortController().signal, timeoutMs: 1000 })).toEqual({
      text: 'whole',
      truncated: false,
    });
  });

  it('reads nothing once its signal has aborted', async () => {
    const response = new Response('late', { headers: { 'content-type': 'text/plain' } });
    await expect(readBodyText(response, 100, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
