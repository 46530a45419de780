export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** A response body as text, read up to `maxBytes`: more fails, and stops the download. `what` names it in the error. */
export async function cappedText(response: Response, maxBytes: number, what: string): Promise<string> {
  const tooLarge = () => new BodyTooLargeError(`${what} is larger than ${maxBytes} bytes`);
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** A response body's JSON read up to `maxBytes`; undefined when it is larger, unreadable or not JSON. */
export async function cappedJson(response: Response, maxBytes: number): Promise<unknown> {
  try {
    const text = await cappedText(response, maxBytes, 'the body');
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}
