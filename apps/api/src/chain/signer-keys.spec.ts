import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak256, recoverAddress, recoverPublicKey, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, publicKeyToAddress, type PrivateKeyAccount } from 'viem/accounts';
import { recoverableSignature, signedWithKey, SignerKeys } from './signer-keys';

const ORDER = secp256k1.CURVE.n;
const word = (value: bigint) => value.toString(16).padStart(64, '0');
const signatureOf = (r: bigint, s: bigint, v: number): Hex => `0x${word(r)}${word(s)}${v.toString(16)}`;

/** What ecrecover says: whether the signature recovers to `signer` (false where it recovers nothing). */
async function recoversTo(hash: Hex, signature: Hex, signer: Address): Promise<boolean> {
  try {
    return (await recoverAddress({ hash, signature })).toLowerCase() === signer.toLowerCase();
  } catch {
    return false;
  }
}

function keyOf(publicKey: Hex, precomputed: boolean) {
  const key = secp256k1.ProjectivePoint.fromHex(publicKey.slice(2));
  if (precomputed) secp256k1.utils.precompute(4, key);
  return key;
}

/** A signature and the ways an attacker would bend it: each is judged against the signer's key. */
function bent(hash: Hex, signature: Hex): { hash: Hex; signature: Hex }[] {
  const { r, s, v } = recoverableSignature(signature)!;
  const otherV = v === 27 ? 28 : 27;
  return [
    { hash, signature },
    { hash, signature: signatureOf(r, s, otherV) },
    { hash, signature: signatureOf(r, ORDER - s, otherV) }, // the high-s twin: ecrecover takes it
    { hash, signature: signatureOf(r, ORDER - s, v) },
    { hash, signature: signatureOf(r + 1n, s, v) },
    { hash, signature: signatureOf(r, s + 1n, v) },
    { hash: keccak256(hash), signature },
  ];
}

describe('signedWithKey', () => {
  it('says what ecrecover says for signatures and their bent copies, with the key’s table or without', async () => {
    let agreed = 0;
    let signed = 0;
    // 20 random signers, half with the key's precomputed table: 280 signatures and bent copies.
    const signers = 20;
    for (let i = 0; i < signers; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const stranger = privateKeyToAccount(generatePrivateKey());
      const key = keyOf(account.publicKey, i % 2 === 0);
      const hash = keccak256(toHex(`voucher ${i}`));
      const cases = [...bent(hash, await account.sign({ hash })), ...bent(hash, await stranger.sign({ hash }))];
      for (const { hash: h, signature } of cases) {
        const expected = await recoversTo(h, signature, account.address);
        expect({ i, signature, h, fast: signedWithKey(h, recoverableSignature(signature)!, key) }).toEqual({
          i,
          signature,
          h,
          fast: expected,
        });
        agreed++;
        if (expected) signed++;
      }
    }
    // Each signer's own signature and its high-s twin recover to it; nothing else does.
    expect({ agreed, signed }).toEqual({ agreed: signers * 14, signed: signers * 2 });
  });

  it('refuses r or s of zero, of the group order or above, and an r with no point on the curve', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const hash = keccak256(toHex('edge'));
    const { r, s, v } = recoverableSignature(await account.sign({ hash }))!;
    const key = keyOf(account.publicKey, true);
    const edges = [
      { r: 0n, s, v },
      { r, s: 0n, v },
      { r: ORDER, s, v },
      { r, s: ORDER, v },
      { r: r + ORDER, s, v },
      { r: 2n ** 256n - 1n, s, v },
      { r: 5n, s, v }, // x = 5 is on no point of secp256k1
    ] as const;
    for (const edge of edges) {
      expect({ edge, fast: signedWithKey(hash, edge, key) }).toEqual({ edge, fast: false });
      expect(await recoversTo(hash, signatureOf(edge.r, edge.s, edge.v), account.address)).toBe(false);
    }
  });
});

describe('signedWithKey at the edges ecrecover draws', () => {
  const Point = secp256k1.ProjectivePoint;
  const tabled = (publicKey: string) => secp256k1.utils.precompute(4, Point.fromHex(publicKey));
  const hashOf = (value: bigint): Hex => `0x${word(value)}`;

  it('takes a hash of 0 or of the group order and above (e = 0 or small mod n) as ecrecover does', async () => {
    const privateKey = generatePrivateKey();
    const account = privateKeyToAccount(privateKey);
    const key = tabled(account.publicKey.slice(2));
    for (const e of [0n, ORDER, ORDER + 1n, 2n ** 256n - 1n]) {
      const signature = secp256k1.sign(word(e), privateKey.slice(2), { lowS: false });
      const parts = { r: signature.r, s: signature.s, v: (27 + signature.recovery!) as 27 | 28 };
      const expected = await recoversTo(hashOf(e), signatureOf(parts.r, parts.s, parts.v), account.address);
      expect({ e, expected, fast: signedWithKey(hashOf(e), parts, key) }).toEqual({ e, expected: true, fast: true });
    }
  });

  it('refuses r when R’s x is r + n (plain ECDSA’s x mod n would take it; ecrecover reads x = r)', async () => {
    let r = 1n;
    for (; ; r++) {
      try {
        Point.fromHex(`02${word(ORDER + r)}`);
        break;
      } catch {
        // no point has x = n + r: the next r
      }
    }
    const hash = keccak256(toHex('x beyond n'));
    const s = 12345n;
    for (const recovery of [2, 3]) {
      const key = new secp256k1.Signature(r, s).addRecoveryBit(recovery).recoverPublicKey(hash.slice(2));
      const address = publicKeyToAddress(`0x${key.toHex(false)}`);
      const parts = { r, s, v: (27 + (recovery & 1)) as 27 | 28 };
      expect(await recoversTo(hash, signatureOf(r, s, parts.v), address)).toBe(false);
      expect(signedWithKey(hash, parts, tabled(key.toHex(false)))).toBe(false);
    }
  });

  it('refuses s + n where s + n still fits 32 bytes (ecrecover requires s < n)', async () => {
    const hash = keccak256(toHex('small s'));
    const r = 1n; // x = 1 is on secp256k1
    const key = new secp256k1.Signature(r, 1n).addRecoveryBit(0).recoverPublicKey(hash.slice(2));
    const address = publicKeyToAddress(`0x${key.toHex(false)}`);
    expect(await recoversTo(hash, signatureOf(r, 1n, 27), address)).toBe(true);
    expect(signedWithKey(hash, { r, s: 1n, v: 27 }, tabled(key.toHex(false)))).toBe(true);
    expect(await recoversTo(hash, signatureOf(r, 1n + ORDER, 27), address)).toBe(false);
    expect(signedWithKey(hash, { r, s: 1n + ORDER, v: 27 }, tabled(key.toHex(false)))).toBe(false);
  });
});

describe('recoverableSignature', () => {
  it('reads 65 hex bytes with v of 27 or 28, nothing else', () => {
    const good = signatureOf(1n, 2n, 27);
    expect(recoverableSignature(good)).toEqual({ r: 1n, s: 2n, v: 27 });
    expect(recoverableSignature(signatureOf(1n, 2n, 28))).toEqual({ r: 1n, s: 2n, v: 28 });
    for (const bad of [
      signatureOf(1n, 2n, 0),
      signatureOf(1n, 2n, 1),
      signatureOf(1n, 2n, 29),
      `${good}00`,
      good.slice(0, -2),
      `${good.slice(0, -3)}z1b`,
      `0X${good.slice(2)}`,
    ])
      expect({ bad, parts: recoverableSignature(bad as Hex) }).toEqual({ bad, parts: null });
  });
});

describe('SignerKeys', () => {
  function counting(delayMs = 0) {
    const calls = { n: 0 };
    const recover: typeof recoverPublicKey = async (args) => {
      calls.n++;
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, Math.random() * delayMs));
      return recoverPublicKey(args);
    };
    return { calls, recover };
  }
  const signedAs = async (
    keys: SignerKeys,
    account: PrivateKeyAccount,
    label: string,
    signer: Address = account.address,
  ) => {
    const hash = keccak256(toHex(label));
    return keys.signedBy(hash, await account.sign({ hash }), signer);
  };
  const newAccount = () => privateKeyToAccount(generatePrivateKey());

  it('recovers a signer’s signatures until it is admitted, then checks them against its key, answering alike', async () => {
    const { calls, recover } = counting();
    const keys = new SignerKeys(8, recover);
    const account = newAccount();
    expect([await signedAs(keys, account, 'page 0'), await signedAs(keys, account, 'page 1')]).toEqual([true, true]);
    expect({ recoveries: calls.n, knows: keys.knows(account.address) }).toEqual({ recoveries: 2, knows: false });
    // A hash not 32 bytes long is refused before any recovery (which would read its first 32 bytes).
    const padded = keccak256(toHex('padded'));
    expect(await keys.signedBy(`${padded}00`, await account.sign({ hash: padded }), account.address)).toBe(false);
    expect(calls.n).toBe(2);
    keys.admit(account.address);
    const answers: boolean[] = [];
    for (let i = 2; i < 5; i++) answers.push(await signedAs(keys, account, `page ${i}`));
    expect({ answers, recoveries: calls.n, knows: keys.knows(account.address) }).toEqual({
      answers: [true, true, true],
      recoveries: 2,
      knows: true,
    });
    // Checked against the key: another's signature, a flipped v, another hash's signature and a hash
    // not 32 bytes long (recovery would read its first 32) are refused.
    const hash = keccak256(toHex('page 5'));
    const signature = await account.sign({ hash });
    const { r, s, v } = recoverableSignature(signature)!;
    expect([
      await keys.signedBy(hash, await newAccount().sign({ hash }), account.address),
      await keys.signedBy(hash, signatureOf(r, s, v === 27 ? 28 : 27), account.address),
      await keys.signedBy(keccak256(hash), signature, account.address),
      await keys.signedBy(`${hash}00`, signature, account.address),
      await keys.signedBy(hash, signature, account.address),
    ]).toEqual([false, false, false, false, true]);
    expect(calls.n).toBe(2);
  });

  it('admits no key under an address it does not give: a stranger’s signatures never pass for the signer’s', async () => {
    const keys = new SignerKeys(8);
    const victim = newAccount();
    const stranger = newAccount();
    for (let i = 0; i < 3; i++) {
      expect(await signedAs(keys, stranger, `forged ${i}`, victim.address)).toBe(false);
      keys.admit(victim.address);
      expect(await signedAs(keys, stranger, `own ${i}`)).toBe(true);
    }
    expect(keys.knows(victim.address)).toBe(false);
    keys.admit(stranger.address);
    expect([
      await signedAs(keys, stranger, 'forged 3', victim.address),
      await signedAs(keys, victim, 'victim 3'),
      await signedAs(keys, stranger, 'own 3'),
    ]).toEqual([false, true, true]);
  });

  it('answers alike and admits one key whatever case the signer’s address is written in', async () => {
    const { calls, recover } = counting();
    const keys = new SignerKeys(8, recover);
    const account = newAccount();
    const spellings = [account.address.toLowerCase(), account.address, `0x${account.address.slice(2).toUpperCase()}`];
    expect(await signedAs(keys, account, 'case', spellings[0] as Address)).toBe(true);
    keys.admit(spellings[2] as Address);
    for (let i = 0; i < 6; i++)
      expect(await signedAs(keys, account, `case ${i}`, spellings[i % 3] as Address)).toBe(true);
    expect(calls.n).toBe(1);
  });

  it('never lets a stranger’s signature pass for a signer, however first sightings and admissions interleave', async () => {
    for (const bound of [1, 2, 8]) {
      const { recover } = counting(5);
      const keys = new SignerKeys(bound, recover);
      const victim = newAccount();
      const stranger = newAccount();
      for (let round = 0; round < 4; round++) {
        const calls = await Promise.all(
          [victim, stranger, victim, stranger, victim].map(async (signer, i) => {
            const signed = await signedAs(keys, signer, `race ${bound} ${round} ${i}`, victim.address);
            keys.admit(victim.address);
            return signed;
          }),
        );
        expect(calls).toEqual([true, false, true, false, true]);
      }
    }
  });

  it('keeps at most its bound of admitted keys, the least recently used forgotten first; keys met and not admitted push none out', async () => {
    const { calls, recover } = counting();
    const keys = new SignerKeys(2, recover);
    const [a, b, c] = [newAccount(), newAccount(), newAccount()];
    for (const account of [a, b]) {
      expect(await signedAs(keys, account, 'first')).toBe(true);
      keys.admit(account.address);
    }
    // Strangers met (anyone can sign with a fresh key): the admitted keys stay.
    for (let i = 0; i < 20; i++) expect(await signedAs(keys, newAccount(), `stranger ${i}`)).toBe(true);
    expect([keys.knows(a.address), keys.knows(b.address)]).toEqual([true, true]);
    expect(await signedAs(keys, a, 'again')).toBe(true); // a is now the most recent
    const before = calls.n;
    expect(await signedAs(keys, c, 'first')).toBe(true);
    keys.admit(c.address); // a third admitted key: the least recent (b) goes
    expect([keys.knows(a.address), keys.knows(b.address), keys.knows(c.address)]).toEqual([true, false, true]);
    expect(await signedAs(keys, b, 'again')).toBe(true); // forgotten: recovered again, and answered alike
    expect(calls.n).toBe(before + 2);
  });
});
