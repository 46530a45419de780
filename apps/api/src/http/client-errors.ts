import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/*
 * What Node's HTTP parser refuses before Fastify routes anything (headers too large, a malformed
 * request line, a request too slow): answered like every other error, `{detail}` and no-store,
 * instead of Fastify's own JSON shape. Written to the socket: no request or reply exists yet.
 */

const REFUSALS: Record<string, [status: number, detail: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request took too long to arrive'],
};

export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // Nothing to answer on a connection that is gone (a reset, a closed peer), nor into an answer
  // already under way on it (a bad request pipelined behind a good one): as Node's own handler.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy(error);
    return;
  }
  const [status, detail] = REFUSALS[error.code ?? ''] ?? [400, 'The request is not valid HTTP'];
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
}
