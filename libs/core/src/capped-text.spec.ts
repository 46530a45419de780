import { BodyTooLargeError, BodyTooSlowError, cappedJson, cappedText } from './capped-text';

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

  it('fails, and stops the download, when the whole body has not arrived within withinMs', async () => {
    let canceled = false;
    let timer: ReturnType<typeof setInterval> | undefined;
    // A byte every 10 ms, never ending: each read answered, the body never done.
    const trickled = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(new TextEncoder().encode(' ')), 10);
      },
      cancel() {
        canceled = true;
        clearInterval(timer);
      },
    });
    const started = Date.now();
    await expect(cappedText(new Response(trickled), 1_000_000, 'the answer', 100)).rejects.toThrow(
      new BodyTooSlowError('the answer did not arrive within 100 ms'),
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(canceled).toBe(true);
    // One that arrives in time is read whole.
    expect(await cappedText(new Response(streamOf('ab', 'cd')), 4, 'it', 100)).toBe('abcd');
  });
});

describe('cappedJson', () => {
  it('parses a body up to the cap, and is undefined for a larger, empty or non-JSON one', async () => {
    expect(await cappedJson(new Response('{"a":1}'), 7)).toEqual({ a: 1 });
    expect(await cappedJson(new Response('{"a":1}'), 6)).toBeUndefined();
    expect(await cappedJson(new Response(''), 6)).toBeUndefined();
    expect(await cappedJson(new Response('{"a":'), 60)).toBeUndefined();
  });

  it('is undefined for a body not arrived within withinMs', async () => {
    const never = new Response(new ReadableStream<Uint8Array>());
    expect(await cappedJson(never, 60, 50)).toBeUndefined();
    expect(await cappedJson(new Response('{"a":1}'), 60, 50)).toEqual({ a: 1 });
  });
});
