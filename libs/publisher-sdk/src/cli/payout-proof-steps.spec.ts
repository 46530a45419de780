import { payoutProofMessage } from '@crawlgate/core';
import { execFileSync } from 'node:child_process';
import { payoutProofSteps } from './payout-proof-steps';

const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const PUBLISHER = '3b0f6c1e-7d2a-4c1b-9e8f-0a1b2c3d4e5f';

/** The words a POSIX shell reads from the command line the steps print. */
const wordsOf = (steps: string) => {
  const line = steps.split('\n').find((text) => text.trimStart().startsWith('cast '))!;
  return JSON.parse(
    execFileSync('sh', [
      '-c',
      `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' ${line.trim().slice(5)}`,
    ]).toString(),
  );
};

describe('payoutProofSteps', () => {
  it('prints a command that signs exactly core’s text, asking for the key rather than taking it as an argument', () => {
    const steps = payoutProofSteps(ADDRESS, PUBLISHER);
    expect(wordsOf(steps)).toEqual(['wallet', 'sign', '--interactive', payoutProofMessage(ADDRESS, PUBLISHER)]);
    expect(steps).not.toMatch(/--private-key/);
    expect(steps).toContain(`crawlgate payout set ${ADDRESS} --proof <signature>`);
  });

  it('quotes whatever the API calls the publisher: the shell reads it as one word and runs nothing', () => {
    const hostile = `x'; touch /tmp/crawlgate-pwned-$$; echo '`;
    const steps = payoutProofSteps(ADDRESS, hostile);
    expect(wordsOf(steps)).toEqual(['wallet', 'sign', '--interactive', payoutProofMessage(ADDRESS, hostile)]);
  });
});
