// @crawlgate/devchain: a local anvil chain with a USDC look-alike, for tests and the `local` network.
export { DEV_MNEMONIC, DEV_ACCOUNTS, DEV_ROLES, type DevAccount, type DevRole } from './accounts';
export { startAnvil, anvilBinaryPath, anvilPackageName, DEFAULT_CHAIN_ID, type StartAnvilOptions, type AnvilInstance } from './anvil';
export {
  deployTestUsdc,
  mintTestUsdc,
  usdcBalance,
  TEST_USDC_ADDRESS,
  DEFAULT_USDC_NAME,
  DEFAULT_USDC_VERSION,
  type DeployTestUsdcOptions,
  type TestUsdcDeployment,
  type MintTestUsdcOptions,
  type UsdcBalanceOptions,
} from './deploy';
export { snapshot, revert, mineBlocks, increaseTime } from './chain-control';
export { devChain, devPublicClient, devWalletClient, devTestClient, DEV_POLLING_INTERVAL_MS } from './clients';
export {
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  CANCEL_AUTHORIZATION_TYPES,
  usdcDomain,
  randomNonce,
  buildAuthorization,
  signAuthorization,
  signCancelAuthorization,
  type UsdcDomain,
  type TransferAuthorization,
} from './authorization';
export { testUsdcAbi, testUsdcBytecode, testUsdcSolcVersion } from './artifacts/test-usdc';
export { testWalletAbi, testWalletBytecode } from './artifacts/test-wallet';
