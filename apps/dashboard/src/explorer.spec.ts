import { explorerTxUrl } from './explorer';

const HASH = `0x${'ab'.repeat(32)}`;

describe('explorerTxUrl', () => {
  it('links real networks to their explorer', () => {
    expect(explorerTxUrl('base', HASH)).toBe(`https://basescan.org/tx/${HASH}`);
    expect(explorerTxUrl('base-sepolia', HASH)).toBe(`https://sepolia.basescan.org/tx/${HASH}`);
  });

  it('has no link for the local chain, unknown networks or a malformed hash', () => {
    expect(explorerTxUrl('local', HASH)).toBeNull();
    expect(explorerTxUrl('eip155:10', HASH)).toBeNull();
    expect(explorerTxUrl('toString', HASH)).toBeNull();
    expect(explorerTxUrl('base', null)).toBeNull();
    expect(explorerTxUrl('base', 'javascript:alert(1)')).toBeNull();
  });
});
