import { hasCode } from './account-code';

describe('hasCode', () => {
  const address = `0x${'ab'.repeat(20)}` as const;
  it.each([
    [undefined, false],
    ['0x', false],
    ['0x6080', true],
    [`0xef0100${'cd'.repeat(20)}`, true], // an EIP-7702 delegation
  ] as const)('reads %s as %s', async (code, expected) => {
    expect(await hasCode({ getCode: async () => code }, address)).toBe(expected);
  });
});
