import { BaseError, RpcRequestError } from 'viem';
import { isRevert } from './revert';

function nodeError(code: number, message: string): RpcRequestError {
  return new RpcRequestError({ body: { method: 'eth_estimateGas' }, error: { code, message }, url: 'http://node' });
}

describe('isRevert', () => {
  it("takes the node's own revert, however deep viem wraps it", () => {
    expect(isRevert(nodeError(3, 'execution reverted: InvalidSignature()'))).toBe(true);
    expect(isRevert(nodeError(-32000, 'execution reverted'))).toBe(true);
    expect(isRevert(new BaseError('estimating gas failed', { cause: nodeError(3, 'reverted') }))).toBe(true);
  });

  it('takes no other failure for a revert, nor words that only quote one', () => {
    expect(isRevert(nodeError(-32000, 'insufficient funds for gas * price + value'))).toBe(false);
    expect(isRevert(nodeError(-32005, 'rate limited: execution reverted later'))).toBe(false);
    expect(isRevert(new BaseError('execution reverted'))).toBe(false);
    expect(isRevert(new Error('execution reverted'))).toBe(false);
  });
});
