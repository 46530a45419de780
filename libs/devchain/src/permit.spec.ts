import { maxUint256, parseSignature, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import { DEV_ROLES } from './accounts';
import { startAnvil, type AnvilInstance } from './anvil';
import { testUsdcAbi } from './artifacts/test-usdc';
import { usdcDomain, type UsdcDomain } from './authorization';
import { devPublicClient, devWalletClient } from './clients';
import { deployTestUsdc, mintTestUsdc, usdcBalance } from './deploy';
import { revertReason } from './test-support';

// EIP-2612: the holder signs an approval off-chain; anyone submits it.

const { relayer, publisher, agents } = DEV_ROLES;
const holder = agents[3];
const USDC = 1_000_000n;

const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

let anvil: AnvilInstance;
let client: PublicClient;
let usdc: Address;
let domain: UsdcDomain;

beforeAll(async () => {
  anvil = await startAnvil();
  client = devPublicClient(anvil.rpcUrl);
  ({ usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl }));
  domain = usdcDomain(anvil.chainId, usdc);
  await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: holder.address, amount: 10n * USDC });
});
afterAll(() => anvil?.stop());

const now = (): bigint => BigInt(Math.floor(Date.now() / 1000));
const nonceOf = (owner: Address) =>
  client.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'nonces', args: [owner] });
const allowanceOf = (owner: Address, spender: Address) =>
  client.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'allowance', args: [owner, spender] });

interface Permit {
  owner: Address;
  spender: Address;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}

async function signPermit(p: Permit, signer = holder): Promise<Hex> {
  return signer.account.signTypedData({ domain, types: PERMIT_TYPES, primaryType: 'Permit', message: p });
}

async function submitPermit(form: 'vrs' | 'bytes', p: Permit, signature: Hex) {
  const wallet = devWalletClient(anvil.rpcUrl, anvil.chainId, relayer.account);
  const base = [p.owner, p.spender, p.value, p.deadline] as const;
  let hash: Hash;
  if (form === 'bytes') {
    hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'permit',
      args: [...base, signature],
    });
  } else {
    const { v, r, s } = parseSignature(signature);
    hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'permit',
      args: [...base, Number(v), r, s],
    });
  }
  return client.waitForTransactionReceipt({ hash });
}

describe.each(['vrs', 'bytes'] as const)('permit (%s)', (form) => {
  it('sets the allowance, bumps the nonce, and the spender can then transferFrom', async () => {
    const nonce = await nonceOf(holder.address);
    const p: Permit = { owner: holder.address, spender: relayer.address, value: USDC, nonce, deadline: now() + 600n };
    await submitPermit(form, p, await signPermit(p));
    expect(await allowanceOf(holder.address, relayer.address)).toBe(USDC);
    expect(await nonceOf(holder.address)).toBe(nonce + 1n);

    const before = await usdcBalance({ rpcUrl: anvil.rpcUrl, usdc, account: publisher.address });
    const hash = await devWalletClient(anvil.rpcUrl, anvil.chainId, relayer.account).writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'transferFrom',
      args: [holder.address, publisher.address, USDC],
    });
    await client.waitForTransactionReceipt({ hash });
    expect(await usdcBalance({ rpcUrl: anvil.rpcUrl, usdc, account: publisher.address })).toBe(before + USDC);
    expect(await allowanceOf(holder.address, relayer.address)).toBe(0n);
  });

  it('accepts deadline = max uint256 as "never expires"', async () => {
    const p: Permit = {
      owner: holder.address,
      spender: publisher.address,
      value: 3n,
      nonce: await nonceOf(holder.address),
      deadline: maxUint256,
    };
    await submitPermit(form, p, await signPermit(p));
    expect(await allowanceOf(holder.address, publisher.address)).toBe(3n);
  });

  it('rejects an expired permit: "permit is expired"', async () => {
    const p: Permit = {
      owner: holder.address,
      spender: relayer.address,
      value: USDC,
      nonce: await nonceOf(holder.address),
      deadline: now() - 10n,
    };
    expect(await revertReason(submitPermit(form, p, await signPermit(p)))).toBe('FiatTokenV2: permit is expired');
  });

  it('rejects a wrong signer or a stale nonce: "EIP2612: invalid signature"', async () => {
    const nonce = await nonceOf(holder.address);
    const p: Permit = { owner: holder.address, spender: relayer.address, value: USDC, nonce, deadline: now() + 600n };
    expect(await revertReason(submitPermit(form, p, await signPermit(p, agents[0])))).toBe(
      'EIP2612: invalid signature',
    );
    if (nonce > 0n) {
      const stale = { ...p, nonce: nonce - 1n };
      expect(await revertReason(submitPermit(form, stale, await signPermit(stale)))).toBe('EIP2612: invalid signature');
    }
  });
});

describe('allowances', () => {
  it("transferFrom beyond the allowance reverts with USDC's message", async () => {
    const call = devWalletClient(anvil.rpcUrl, anvil.chainId, publisher.account).writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'transferFrom',
      args: [holder.address, publisher.address, 1_000n],
    });
    expect(await revertReason(call)).toBe('ERC20: transfer amount exceeds allowance');
  });
});
