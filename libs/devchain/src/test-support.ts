// Helpers shared by this library's specs (not exported from the package).
import { readFileSync } from 'node:fs';
import { BaseError, ContractFunctionRevertedError } from 'viem';

/** The Solidity revert string (or custom error name) behind a failed viem call, else the error message. */
export async function revertReason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof BaseError) {
      const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
      if (reverted instanceof ContractFunctionRevertedError && reverted.reason) return reverted.reason;
      // A custom error (`error Name()`), decoded with the contract's ABI: its name.
      if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) return reverted.data.errorName;
    }
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('expected the call to revert, but it succeeded');
}

/** True when `pid` no longer runs: absent, or a zombie waiting to be reaped by init. */
export function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw err;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..." — state Z is a dead process not yet reaped.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}
