/** anvil's default mnemonic: every account it derives is public knowledge. Never use on a real network. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
