export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

export class BodyTooSlowError extends Error {
  override name = 'BodyTooSlowError';
}

/**
 * A response body as text, read up to `maxBytes`: more fails, and stops the download. `what` names
 * it in the error. `withinMs`: the whole body must have arrived by then, or the read fails and the
 * download stops (a sender trickling a byte at a time would hold the reader as long as it liked).
 */
export async function cappedText(
  response: Response,
  maxBytes: number,
  what: string,
  withinMs?: number,
): Promise<string> {
  const tooLarge = () => new BodyTooLargeError(`${what} is larger than ${maxBytes} bytes`);
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  let late = false;
  const deadline =
    withinMs === undefined
      ? undefined
      : setTimeout(() => {
          late = true;
          reader.cancel().catch(() => undefined);
        }, withinMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || late) break;
      size += value.length;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (!late) throw error;
  } finally {
    clearTimeout(deadline);
  }
  if (late) throw new BodyTooSlowError(`${what} did not arrive within ${withinMs} ms`);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * A response body's JSON read up to `maxBytes` (and within `withinMs`, when given); undefined when
 * it is larger, later, unreadable or not JSON.
 */
export async function cappedJson(response: Response, maxBytes: number, withinMs?: number): Promise<unknown> {
  try {
    const text = await cappedText(response, maxBytes, 'the body', withinMs);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}
