// @crawlgate/devchain: a local anvil chain with a USDC look-alike and the x402 batch-settlement
// escrow, for tests and the `local` network.
export { DEV_MNEMONIC, DEV_ACCOUNTS, DEV_ROLES, type DevAccount, type DevRole } from './accounts';
export {
  startAnvil,
  anvilBinaryPath,
  anvilPackageName,
  DEFAULT_CHAIN_ID,
  type StartAnvilOptions,
  type AnvilInstance,
} from './anvil';
export {
  deployTestUsdc,
  mintTestUsdc,
  blacklistTestUsdc,
  usdcBalance,
  TEST_USDC_ADDRESS,
  DEFAULT_USDC_NAME,
  DEFAULT_USDC_VERSION,
  type DeployTestUsdcOptions,
  type TestUsdcDeployment,
  type MintTestUsdcOptions,
  type BlacklistTestUsdcOptions,
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
export { testBundlerAbi, testBundlerBytecode } from './artifacts/test-bundler';
export { simulationAwareWalletAbi, simulationAwareWalletBytecode } from './artifacts/simulation-aware-wallet';
export {
  placeBatchSettlement,
  deployBatchSettlement,
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  type BatchSettlementDeployment,
} from './batch-settlement-deploy';
export {
  BATCH_SETTLEMENT_DOMAIN_NAME,
  BATCH_SETTLEMENT_DOMAIN_VERSION,
  MIN_WITHDRAW_DELAY,
  MAX_WITHDRAW_DELAY,
  CHANNEL_CONFIG_TYPES,
  VOUCHER_TYPES,
  REFUND_TYPES,
  CLAIM_BATCH_TYPES,
  batchSettlementDomain,
  channelIdOf,
  signVoucher,
  signClaimBatch,
  signRefund,
  erc3009DepositNonce,
  signErc3009Deposit,
  erc3009CollectorData,
  type ChannelConfig,
  type VoucherClaim,
  type BatchSettlementDomain,
  type Erc3009Deposit,
} from './batch-settlement-typed-data';
export { batchSettlementAbi, batchSettlementBytecode } from './artifacts/batch-settlement';
export { erc3009DepositCollectorAbi, erc3009DepositCollectorBytecode } from './artifacts/erc3009-deposit-collector';
