/*
 * A response body as text for the assistant, read only as far as it will be shown: a page of
 * gigabytes costs no more than its first `maxChars` characters. Binary bodies (images, PDFs,
 * archives) are not decoded at all: as text they would be noise in the assistant's context.
 */

export interface BodyText {
  /** null for a binary body. */
  text: string | null;
  /** True when the body went on past what `text` holds. */
  truncated: boolean;
}

const TEXTUAL =
  /^(?:text\/|application\/(?:[\w.+-]+\+)?(?:json|xml)\b|application\/(?:javascript|ecmascript|x-www-form-urlencoded)\b)/i;

/** Whether a Content-Type is text to read; a missing one is taken as text (servers that omit it mostly serve text). */
export function isTextual(contentType: string | null): boolean {
  return contentType === null || contentType.trim() === '' || TEXTUAL.test(contentType.trim());
}

/** How long fetch_page waits for a page's body once its answer came (paid or not, it is over by then). */
export const BODY_READ_MS = 30_000;

/**
 * The body as text, up to `maxChars`. When `signal` aborts first, or `timeoutMs` passes (a
 * TimeoutError), the body is let go of and why thrown: a page can send a byte every few minutes for ever.
 */
export async function readBodyText(
  response: Response,
  maxChars: number,
  { signal, timeoutMs }: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<BodyText> {
  const contentType = response.headers.get('content-type');
  if (!isTextual(contentType)) {
    discardBody(response);
    return { text: null, truncated: false };
  }
  if (!response.body) return { text: '', truncated: false };
  const decoder = decoderFor(contentType);
  const reader = response.body.getReader();
  // A cancel ends the read waiting for the next chunk (it resolves as done), then why is thrown.
  let stopped: { why: unknown } | undefined;
  const stop = (why: unknown) => {
    stopped ??= { why };
    void reader.cancel(why).catch(() => undefined);
  };
  const aborted = () => stop(signal?.reason);
  signal?.addEventListener('abort', aborted, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(
          () => stop(new DOMException(`the body did not finish within ${timeoutMs / 1000} s`, 'TimeoutError')),
          timeoutMs,
        );
  let text = '';
  let ended = false;
  try {
    signal?.throwIfAborted();
    while (text.length <= maxChars) {
      const { done, value } = await reader.read();
      if (stopped) throw stopped.why;
      if (done) {
        text += decoder.decode();
        ended = true;
        break;
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', aborted);
    // Not awaited: a cancel settles only once every branch of a tee'd body is cancelled.
    if (!ended) void reader.cancel(stopped?.why).catch(() => undefined);
  }
  return text.length > maxChars ? { text: cut(text, maxChars), truncated: true } : { text, truncated: !ended };
}

/** Lets go of a body that will not be read, so its connection is freed. */
export function discardBody(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}

/** The Content-Type's charset when the platform knows it, else UTF-8 (what the web mostly is). */
function decoderFor(contentType: string | null): InstanceType<typeof TextDecoder> {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** The first `max` UTF-16 units, without splitting a surrogate pair. */
function cut(text: string, max: number): string {
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return text.slice(0, end);
}
