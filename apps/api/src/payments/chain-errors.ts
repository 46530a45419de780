import { BroadcastFailed } from '../chain/relayer-broadcast';
import { ApiError, unavailable } from '../http/api-error';

const UNREACHABLE_NAMES = new Set(['HttpRequestError', 'TimeoutError', 'WebSocketRequestError', 'SocketClosedError']);
const UNREACHABLE_MESSAGES = /fetch failed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|other side closed/i;

/** True when the RPC endpoint could not be reached at all, as opposed to a call it answered. */
export function isChainUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    const { name, message, code } = current as { name?: unknown; message?: unknown; code?: unknown };
    if (typeof name === 'string' && UNREACHABLE_NAMES.has(name)) return true;
    if (typeof code === 'string' && UNREACHABLE_MESSAGES.test(code)) return true;
    if (typeof message === 'string' && UNREACHABLE_MESSAGES.test(message)) return true;
  }
  return false;
}

/** Node's codes, and the calls, of a connection that never opened: its request was never written. */
const NEVER_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const CONNECT_CALLS = new Set(['connect', 'getaddrinfo']);

/**
 * Whether the node may have taken the transaction of a broadcast that failed with `error` (a
 * BroadcastFailed). Only a connection that never opened proves it did not. A timeout, a reset, a
 * lost answer, and any answer a node or a gateway gave ("internal error: upstream socket hang up")
 * may follow a transaction the chain took: releasing the gate then would lose a payment the chain
 * made. Failures before the broadcast (its gas, its nonce) sent nothing.
 */
export function broadcastMayHaveLanded(error: unknown): boolean {
  return failedBroadcast(error) !== null && !neverConnected(error);
}

/** The BroadcastFailed in `error`'s chain, or null when the failure came before anything was sent. */
export function failedBroadcast(error: unknown): BroadcastFailed | null {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    if (current instanceof BroadcastFailed) return current;
  }
  return null;
}

/**
 * Whether `error` (through its causes) is Node's own error for a socket that failed while
 * connecting, read through viem's chain (not messages): the node never saw the request.
 */
export function neverConnected(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    const { code, syscall } = current as { code?: unknown; syscall?: unknown };
    if (typeof syscall === 'string' && CONNECT_CALLS.has(syscall)) return true;
    // Only while connecting: an unreachable host on a socket already open (a read or write the
    // kernel gave up on) may follow a request the node received.
    if (typeof code === 'string' && NEVER_CONNECTED_CODES.has(code) && syscall === undefined) return true;
  }
  return false;
}

/** The 503 for chain trouble that sent nothing; `why` says what the trouble is. */
export const chainUnavailable = (why = 'The payment network is unreachable', retryAfterSeconds = 5) =>
  unavailable(
    `${why}; this request settled nothing and the gate stays payable. Send the same payment again shortly.`,
    retryAfterSeconds,
  );

/**
 * The answer for a relayer broadcast that failed having sent nothing (refused before signing, as
 * above the fee cap, or a node never reached), or null when the node may have taken it.
 */
export function nothingSentAnswer(error: unknown): ApiError | null {
  // Thrown before the relayer signs: no ApiError comes out of a broadcast itself.
  if (error instanceof ApiError) return error;
  return isChainUnreachable(error) && !broadcastMayHaveLanded(error) ? chainUnavailable() : null;
}

/** Runs a chain call, turning "cannot reach the RPC" into a 503 for the client, the node's error its cause. */
export async function onChain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isChainUnreachable(error)) throw Object.assign(chainUnavailable(), { cause: error });
    throw error;
  }
}

/** The revert string of a failed simulation or call, searched through viem's error chain. */
export function revertMessage(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    const { reason, shortMessage, message } = current as {
      reason?: unknown;
      shortMessage?: unknown;
      message?: unknown;
    };
    for (const text of [reason, shortMessage, message]) if (typeof text === 'string') parts.push(text);
  }
  return parts.join(' | ');
}
