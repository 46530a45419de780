import { mnemonicToAccount, privateKeyToAddress } from 'viem/accounts';
import { DEV_ACCOUNTS, DEV_MNEMONIC, DEV_ROLES } from './accounts';

describe('dev accounts', () => {
  it("are the default mnemonic's first ten accounts, with anvil's well-known addresses", () => {
    expect(DEV_ACCOUNTS).toHaveLength(10);
    expect(DEV_ACCOUNTS[0].address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(DEV_ACCOUNTS[9].address).toBe('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
    DEV_ACCOUNTS.forEach((a, i) => {
      expect(a.index).toBe(i);
      expect(privateKeyToAddress(a.privateKey)).toBe(a.address);
    });
    // The seed is stretched once here: each account is still the one viem derives from the mnemonic.
    for (const a of DEV_ACCOUNTS)
      expect(mnemonicToAccount(DEV_MNEMONIC, { addressIndex: a.index }).address).toBe(a.address);
  });

  it('have fixed roles', () => {
    expect(DEV_ROLES.relayer.index).toBe(0);
    expect(DEV_ROLES.publisher.index).toBe(1);
    expect(DEV_ROLES.agents.map((a) => a.index)).toEqual([2, 3, 4, 5]);
    expect(DEV_ROLES.spare.map((a) => a.index)).toEqual([6, 7, 8]);
    expect(DEV_ROLES.deployer.index).toBe(9);
    expect(DEV_ACCOUNTS.map((a) => a.role)).toEqual([
      'relayer',
      'publisher',
      'agent',
      'agent',
      'agent',
      'agent',
      'spare',
      'spare',
      'spare',
      'deployer',
    ]);
  });
});
