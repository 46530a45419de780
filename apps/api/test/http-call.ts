export interface CallOptions {
  body?: unknown;
  /** Sent as is (not JSON-encoded) with rawBody: true: text, or bytes (which need not be valid UTF-8). */
  rawBody?: boolean;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

export type Call = (method: string, path: string, options?: CallOptions) => Promise<CallResult>;

/** fetch against an API at `baseUrl`: JSON in, parsed JSON out (text when the answer is not JSON). */
export function httpCaller(baseUrl: string): Call {
  return async (method, path, { body, rawBody, headers = {} } = {}) => {
    const hasBody = body !== undefined;
    const response = await fetch(baseUrl + path, {
      method,
      headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...headers },
      body: hasBody ? (rawBody ? (body as RequestInit['body']) : JSON.stringify(body)) : undefined,
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
}
