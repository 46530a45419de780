import { DEV_ROLES } from './accounts';
import { testUsdcAbi } from './artifacts/test-usdc';
import { buildAuthorization, signAuthorization } from './authorization';
import {
  chainTime,
  channelConfig,
  claimSigned,
  depositInto,
  escrowWrite,
  mint,
  startEscrowChain,
  voucherClaim,
  USDC,
  type EscrowChain,
} from './batch-settlement-test-kit';
import { devWalletClient } from './clients';

// Gas per paid page: one channel paying 100 pages (deposit + one claim of the 100th cumulative
// voucher + settle, from receipts) against one `exact` settlement (EIP-3009
// transferWithAuthorization) on the same chain. Gas is deterministic, so the ratio is asserted.

const PAGES = 100n;
const PRICE = 1_000n; // $0.001
const { relayer, publisher, agents } = DEV_ROLES;

let chain: EscrowChain;

beforeAll(async () => {
  chain = await startEscrowChain();
  await mint(chain, agents[0].address, 10n * USDC);
});
afterAll(() => chain?.anvil.stop());

it(`pays ${PAGES} pages through one channel for at most 1/20 of the gas of ${PAGES} exact settlements`, async () => {
  const config = channelConfig(chain);
  // Both payees already hold USDC, as a publisher does after its first sale.
  await mint(chain, publisher.address, 1n);
  await mint(chain, config.receiver, 1n);

  const auth = buildAuthorization({
    from: agents[0].address,
    to: publisher.address,
    value: PRICE,
    now: await chainTime(chain),
  });
  const signature = await signAuthorization(agents[0].account, chain.tokenDomain, auth);
  const wallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, relayer.account);
  const hash = await wallet.writeContract({
    address: chain.usdc,
    abi: testUsdcAbi,
    functionName: 'transferWithAuthorization',
    args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, signature],
  });
  const exactGas = (await chain.client.waitForTransactionReceipt({ hash })).gasUsed;

  const depositGas = (await depositInto(chain, config, PAGES * PRICE)).gasUsed;
  // Each page carries a cumulative voucher; the receiver claims only the last one.
  const vouchers = [];
  for (let page = 1n; page <= PAGES; page++) vouchers.push(await voucherClaim(chain, config, page * PRICE));
  const claimGas = (await claimSigned(chain, [vouchers[vouchers.length - 1]])).gasUsed;
  const settleGas = (await escrowWrite(chain, relayer, 'settle', [config.receiver, chain.usdc])).gasUsed;

  const perPage = (depositGas + claimGas + settleGas) / PAGES;
  const ratio = Number(depositGas + claimGas + settleGas) / Number(PAGES * exactGas);
  console.log(
    `batch-settlement gas: deposit ${depositGas} + claim ${claimGas} + settle ${settleGas} = ${depositGas + claimGas + settleGas} ` +
      `for ${PAGES} pages → ${perPage} per page; one exact transferWithAuthorization ${exactGas}; ratio ${ratio.toFixed(4)} (goal ≤ 0.05)`,
  );
  expect(ratio).toBeLessThanOrEqual(1 / 20);
});
