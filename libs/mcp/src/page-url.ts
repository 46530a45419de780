import { ToolError } from './refusals';

/** Longer URLs are refused: no page needs more, and the URL is echoed in results and logs. */
const MAX_URL_LENGTH = 8192;

/**
 * The URL a tool was given, if it is one the server will request: absolute http(s), without
 * credentials (fetch refuses those, and they have no business in an assistant's tool call).
 */
export function pageUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH)
    throw new ToolError('invalid_url', `The URL is longer than ${MAX_URL_LENGTH} characters`);
  if (!URL.canParse(text))
    throw new ToolError('invalid_url', 'Not an absolute URL: give one such as https://example.com/page', { url: text });
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError('invalid_url', `Only http and https URLs are read, not ${url.protocol}`, { url: text });
  if (url.username !== '' || url.password !== '')
    throw new ToolError('invalid_url', 'The URL carries credentials; give it without them', {
      url: `${url.protocol}//${url.host}${url.pathname}`,
    });
  return url;
}
