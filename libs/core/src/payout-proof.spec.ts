import { payoutProofMessage } from './payout-proof';

describe('payoutProofMessage', () => {
  const publisherId = '0F8FAD5B-D9CB-469F-A165-70867728950E';

  it('names the address and the publisher, whatever their case', () => {
    const message = payoutProofMessage('0x70997970C51812dc3A010C7d01b50e0d17dc79C8', publisherId);
    expect(message).toBe(
      'Crawlgate payout address 0x70997970c51812dc3a010c7d01b50e0d17dc79c8 for publisher 0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    expect(payoutProofMessage('0x70997970c51812dc3a010c7d01b50e0d17dc79c8', publisherId.toLowerCase())).toBe(message);
  });

  it('differs for another publisher or another address', () => {
    const message = payoutProofMessage('0x70997970C51812dc3A010C7d01b50e0d17dc79C8', publisherId);
    expect(
      payoutProofMessage('0x70997970C51812dc3A010C7d01b50e0d17dc79C8', '1f8fad5b-d9cb-469f-a165-70867728950e'),
    ).not.toBe(message);
    expect(payoutProofMessage('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', publisherId)).not.toBe(message);
  });
});
