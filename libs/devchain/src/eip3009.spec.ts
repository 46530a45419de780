import { parseEventLogs, parseSignature, size, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import { DEV_ROLES, type DevAccount } from './accounts';
import { startAnvil, type AnvilInstance } from './anvil';
import { testUsdcAbi } from './artifacts/test-usdc';
import { testWalletAbi, testWalletBytecode } from './artifacts/test-wallet';
import {
  buildAuthorization,
  signAuthorization,
  signCancelAuthorization,
  usdcDomain,
  type TransferAuthorization,
  type UsdcDomain,
} from './authorization';
import { devPublicClient, devWalletClient } from './clients';
import { deployTestUsdc, mintTestUsdc, usdcBalance } from './deploy';
import { revertReason } from './test-support';

// Real EIP-3009 payments: an agent signs off-chain with viem, the relayer (or the payee) submits.

const { relayer, publisher, agents, spare } = DEV_ROLES;
const [agent, otherAgent, walletOwner] = agents;
const broke = spare[2]; // never funded
const USDC = 1_000_000n;
// secp256k1 group order, to build a high-s twin of a valid signature.
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let anvil: AnvilInstance;
let client: PublicClient;
let usdc: Address;
let domain: UsdcDomain;
let smartWallet: Address;

beforeAll(async () => {
  anvil = await startAnvil();
  client = devPublicClient(anvil.rpcUrl);
  ({ usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl }));
  domain = usdcDomain(anvil.chainId, usdc);
  await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: agent.address, amount: 100n * USDC });

  const hash = await devWalletClient(anvil.rpcUrl, anvil.chainId, walletOwner.account).deployContract({
    abi: testWalletAbi,
    bytecode: testWalletBytecode,
    args: [walletOwner.address],
  });
  smartWallet = (await client.waitForTransactionReceipt({ hash })).contractAddress as Address;
  await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: smartWallet, amount: 10n * USDC });
});
afterAll(() => anvil?.stop());

const balance = (account: Address): Promise<bigint> => usdcBalance({ rpcUrl: anvil.rpcUrl, usdc, account });
const now = (): bigint => BigInt(Math.floor(Date.now() / 1000));
const authorize = (overrides: Partial<TransferAuthorization> = {}): TransferAuthorization => ({
  ...buildAuthorization({ from: agent.address, to: publisher.address, value: USDC }),
  ...overrides,
});

type Form = 'vrs' | 'bytes';
type Fn = 'transferWithAuthorization' | 'receiveWithAuthorization';

/** Submits an EIP-3009 call in either signature form; resolves with the mined receipt. */
async function submit(fn: Fn, form: Form, auth: TransferAuthorization, signature: Hex, sender: DevAccount = relayer) {
  const wallet = devWalletClient(anvil.rpcUrl, anvil.chainId, sender.account);
  const base = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce] as const;
  let hash: Hash;
  if (form === 'bytes') {
    hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: fn,
      args: [...base, signature],
    });
  } else {
    const { v, r, s } = parseSignature(signature);
    hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: fn,
      args: [...base, Number(v), r, s],
    });
  }
  const receipt = await client.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return receipt;
}

const transfer = (form: Form, auth: TransferAuthorization, signature: Hex, sender?: DevAccount) =>
  submit('transferWithAuthorization', form, auth, signature, sender);

describe.each<Form>(['vrs', 'bytes'])('transferWithAuthorization (%s)', (form) => {
  it('moves funds signed by the payer, submitted by the relayer, and marks the nonce used', async () => {
    const auth = authorize();
    const signature = await signAuthorization(agent.account, domain, auth);
    const [payerBefore, payeeBefore] = await Promise.all([balance(agent.address), balance(publisher.address)]);

    const receipt = await transfer(form, auth, signature);

    expect(await balance(agent.address)).toBe(payerBefore - USDC);
    expect(await balance(publisher.address)).toBe(payeeBefore + USDC);
    const events = parseEventLogs({ abi: testUsdcAbi, logs: receipt.logs });
    expect(events.map((e) => e.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(events[0].args).toEqual({ authorizer: agent.address, nonce: auth.nonce });
    expect(events[1].args).toEqual({ from: agent.address, to: publisher.address, value: USDC });
    expect(
      await client.readContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'authorizationState',
        args: [agent.address, auth.nonce],
      }),
    ).toBe(true);
  });

  it('rejects a replay: "authorization is used or canceled"', async () => {
    const auth = authorize();
    const signature = await signAuthorization(agent.account, domain, auth);
    await transfer(form, auth, signature);
    expect(await revertReason(transfer(form, auth, signature))).toBe('FiatTokenV2: authorization is used or canceled');
  });

  it('rejects an authorization before validAfter: "authorization is not yet valid"', async () => {
    const auth = authorize({ validAfter: now() + 3_600n, validBefore: now() + 7_200n });
    const signature = await signAuthorization(agent.account, domain, auth);
    expect(await revertReason(transfer(form, auth, signature))).toBe('FiatTokenV2: authorization is not yet valid');
  });

  it('rejects an authorization after validBefore: "authorization is expired"', async () => {
    const auth = authorize({ validBefore: now() - 1n });
    const signature = await signAuthorization(agent.account, domain, auth);
    expect(await revertReason(transfer(form, auth, signature))).toBe('FiatTokenV2: authorization is expired');
  });

  it('rejects a signature by someone else, or over another domain: "invalid signature"', async () => {
    const auth = authorize();
    const byOther = await signAuthorization(otherAgent.account, domain, auth);
    expect(await revertReason(transfer(form, auth, byOther))).toBe('FiatTokenV2: invalid signature');
    // Base Sepolia's name on a "USD Coin" token: the classic misconfiguration.
    const wrongName = await signAuthorization(agent.account, { ...domain, name: 'USDC' }, auth);
    expect(await revertReason(transfer(form, auth, wrongName))).toBe('FiatTokenV2: invalid signature');
    const tampered = await signAuthorization(agent.account, domain, auth);
    expect(await revertReason(transfer(form, { ...auth, value: 2n * USDC }, tampered))).toBe(
      'FiatTokenV2: invalid signature',
    );
  });

  it('rejects a malleable high-s twin of a valid signature', async () => {
    const auth = authorize();
    const { r, s, yParity } = parseSignature(await signAuthorization(agent.account, domain, auth));
    const highS = (N - BigInt(s)).toString(16).padStart(64, '0');
    const twin = `${r}${highS}${yParity === 0 ? '1c' : '1b'}` as Hex;
    expect(await revertReason(transfer(form, auth, twin))).toBe("ECRecover: invalid signature 's' value");
  });

  it('rejects a payer without funds: "transfer amount exceeds balance"', async () => {
    const auth = authorize({ from: broke.address });
    const signature = await signAuthorization(broke.account, domain, auth);
    expect(await revertReason(transfer(form, auth, signature))).toBe('ERC20: transfer amount exceeds balance');
  });

  it('accepts ERC-1271 signatures from a smart-contract wallet', async () => {
    const auth = authorize({ from: smartWallet });
    const signature = await signAuthorization(walletOwner.account, domain, auth);
    const before = await balance(smartWallet);
    await transfer(form, auth, signature);
    expect(await balance(smartWallet)).toBe(before - USDC);

    const notTheOwner = authorize({ from: smartWallet });
    const bad = await signAuthorization(otherAgent.account, domain, notTheOwner);
    expect(await revertReason(transfer(form, notTheOwner, bad))).toBe('FiatTokenV2: invalid signature');
  });
});

describe('transferWithAuthorization (bytes) signature shape', () => {
  it('rejects a signature that is not 65 bytes', async () => {
    const auth = authorize();
    const signature = await signAuthorization(agent.account, domain, auth);
    const short = signature.slice(0, -2) as Hex;
    expect(size(short)).toBe(64);
    expect(await revertReason(transfer('bytes', auth, short))).toBe('ECRecover: invalid signature length');
  });
});

describe.each<Form>(['vrs', 'bytes'])('receiveWithAuthorization (%s)', (form) => {
  it('only the payee may submit: "caller must be the payee"', async () => {
    const auth = authorize();
    const signature = await signAuthorization(agent.account, domain, auth, 'receive');
    expect(await revertReason(submit('receiveWithAuthorization', form, auth, signature, relayer))).toBe(
      'FiatTokenV2: caller must be the payee',
    );
    const before = await balance(publisher.address);
    await submit('receiveWithAuthorization', form, auth, signature, publisher);
    expect(await balance(publisher.address)).toBe(before + USDC);
  });

  it('does not accept a TransferWithAuthorization signature (typehashes differ)', async () => {
    const auth = authorize();
    const transferSig = await signAuthorization(agent.account, domain, auth, 'transfer');
    expect(await revertReason(submit('receiveWithAuthorization', form, auth, transferSig, publisher))).toBe(
      'FiatTokenV2: invalid signature',
    );
  });
});

describe.each<Form>(['vrs', 'bytes'])('cancelAuthorization (%s)', (form) => {
  async function cancel(authorizer: Address, nonce: Hex, signature: Hex) {
    const wallet = devWalletClient(anvil.rpcUrl, anvil.chainId, relayer.account);
    const hash =
      form === 'bytes'
        ? await wallet.writeContract({
            address: usdc,
            abi: testUsdcAbi,
            functionName: 'cancelAuthorization',
            args: [authorizer, nonce, signature],
          })
        : await (async () => {
            const { v, r, s } = parseSignature(signature);
            return wallet.writeContract({
              address: usdc,
              abi: testUsdcAbi,
              functionName: 'cancelAuthorization',
              args: [authorizer, nonce, Number(v), r, s],
            });
          })();
    return client.waitForTransactionReceipt({ hash });
  }

  it('cancels an unused authorization, which then cannot be used or canceled again', async () => {
    const auth = authorize();
    const paySig = await signAuthorization(agent.account, domain, auth);
    const cancelSig = await signCancelAuthorization(agent.account, domain, agent.address, auth.nonce);

    const receipt = await cancel(agent.address, auth.nonce, cancelSig);
    const [event] = parseEventLogs({ abi: testUsdcAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
    expect(event.args).toEqual({ authorizer: agent.address, nonce: auth.nonce });

    expect(await revertReason(transfer(form, auth, paySig))).toBe('FiatTokenV2: authorization is used or canceled');
    expect(await revertReason(cancel(agent.address, auth.nonce, cancelSig))).toBe(
      'FiatTokenV2: authorization is used or canceled',
    );
  });

  it("needs the authorizer's signature", async () => {
    const auth = authorize();
    const byOther = await signCancelAuthorization(otherAgent.account, domain, agent.address, auth.nonce);
    expect(await revertReason(cancel(agent.address, auth.nonce, byOther))).toBe('FiatTokenV2: invalid signature');
  });
});
