import { BaseError, RpcRequestError } from 'viem';

/**
 * A call the contract reverted, as the node's own JSON-RPC error says it (code 3, or a message that
 * begins "execution reverted"): the chain's answer, not its failure. Only the node's error object is
 * read, not viem's wording around it, which quotes the request.
 */
export function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const rpc = error.walk((cause) => cause instanceof RpcRequestError);
  if (!(rpc instanceof RpcRequestError)) return false;
  return rpc.code === 3 || /^execution reverted/i.test(rpc.details);
}

/**
 * A call the EVM halted for what it ran (out of gas, out of memory gas, an invalid opcode, the stack),
 * as the node's own JSON-RPC error says it: like a revert, the code's answer within the gas it was
 * given, not the node's failure (anvil says "EVM error MemoryOOG", geth "out of gas").
 */
export function isExecutionHalt(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const rpc = error.walk((cause) => cause instanceof RpcRequestError);
  if (!(rpc instanceof RpcRequestError)) return false;
  return /out of gas|OutOfGas|MemoryOOG|MemoryLimitOOG|InvalidFEOpcode|invalid opcode|stack (overflow|underflow)|StackOverflow|StackUnderflow/i.test(
    rpc.details,
  );
}
