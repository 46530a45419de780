import { unavailable } from '../http/api-error';

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

/**
 * Whether the node may have taken the transaction although the call failed: the broadcast itself
 * failed after its request could have arrived (a reset, a timeout, a lost answer). Releasing the
 * gate then would lose a payment the chain made, and let the agent pay a second time.
 */
export function broadcastMayHaveLanded(error: unknown): boolean {
  let broadcast = false;
  let refused = false;
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    const { body, code } = current as { body?: { method?: unknown }; code?: unknown };
    if (body?.method === 'eth_sendRawTransaction') broadcast = true;
    if (code === 'ECONNREFUSED') refused = true; // never connected: nothing was sent
  }
  return broadcast && !refused;
}

export const chainUnavailable = () =>
  unavailable('The payment network is unreachable; nothing was charged and the gate stays payable. Try again shortly.');

/** Runs a chain call, turning "cannot reach the RPC" into a 503 for the client. */
export async function onChain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isChainUnreachable(error)) throw chainUnavailable();
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
