import { ApiError, payoutProofMessageOf } from './errors';

describe('payoutProofMessageOf', () => {
  const message = 'Crawlgate payout address 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 for publisher p';

  it("reads the text to sign from the API's 409 to a payout address another publisher names", () => {
    const error = new ApiError({ status: 409, detail: 'Another publisher…', body: { payout_proof_message: message } });
    expect(payoutProofMessageOf(error)).toBe(message);
  });

  it('is undefined for any other failure', () => {
    expect(
      payoutProofMessageOf(new ApiError({ status: 409, detail: 'taken', body: { detail: 'taken' } })),
    ).toBeUndefined();
    expect(
      payoutProofMessageOf(new ApiError({ status: 400, detail: 'bad', body: { payout_proof_message: message } })),
    ).toBeUndefined();
    expect(
      payoutProofMessageOf(new ApiError({ status: 409, detail: 'x', body: { payout_proof_message: 7 } })),
    ).toBeUndefined();
    expect(payoutProofMessageOf(new Error('network'))).toBeUndefined();
  });
});
