import { rememberLast } from '@crawlgate/core';
import { invert, mod } from '@noble/curves/abstract/modular';
import { secp256k1 } from '@noble/curves/secp256k1';
import { isAddressEqual, isHex, recoverPublicKey, type Address, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';

/*
 * Whether an address signed a hash, as the EVM's ecrecover would say: recovered the first time,
 * then checked against the signer's public key. Recovering a key (a square root and a scalar
 * multiplication of a point met for the first time) costs a few times more than checking a
 * signature against a known key with precomputed multiples: a payer paying page after page by
 * voucher signs with one key.
 */

const Point = secp256k1.ProjectivePoint;
type Point = InstanceType<typeof Point>;
const ORDER = secp256k1.CURVE.n;

/** Admitted keys kept at most; each with its table weighs about 40 KB. The least recently used go first. */
const MAX_KEYS = 128;
/** Keys met and not admitted, kept at most (about 200 bytes each, no table). */
const MAX_MET = 1_024;
/** The precomputed multiples' window: 2 ms to build here, then about 0.3 ms a multiplication. */
const KEY_WINDOW = 4;

/** A signature as the EVM's ecrecover reads it: r, s and v of 27 or 28. */
export interface RecoverableSignature {
  r: bigint;
  s: bigint;
  v: 27 | 28;
}

/** The 65-byte hex signature's r, s and v; null when it is not 65 bytes or its v is neither 27 nor 28. */
export function recoverableSignature(signature: Hex): RecoverableSignature | null {
  if (signature.length !== 2 + 130 || !isHex(signature, { strict: true })) return null;
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if (v !== 27 && v !== 28) return null;
  return { r: BigInt(`0x${signature.slice(2, 66)}`), s: BigInt(`0x${signature.slice(66, 130)}`), v };
}

/**
 * Whether ecrecover(hash, v, r, s) is `key`: R = (e·G + r·key) / s must be the point whose x is r
 * and whose y's parity v names, the one ecrecover rebuilds from r and v (r and s in [1, n)).
 */
export function signedWithKey(hash: Hex, signature: RecoverableSignature, key: Point): boolean {
  const { r, s, v } = signature;
  if (r <= 0n || r >= ORDER || s <= 0n || s >= ORDER) return false;
  const w = invert(s, ORDER);
  const u1 = mod(BigInt(hash) * w, ORDER);
  const u2 = mod(r * w, ORDER);
  // multiply(), not multiplyUnsafe(): @noble/curves 1.9.1's multiplyUnsafe gives wrong points for a
  // point with precomputed multiples (signer-keys.spec.ts fails with it), multiply() right ones.
  const sum = (u1 === 0n ? Point.ZERO : Point.BASE.multiply(u1)).add(key.multiply(u2));
  if (sum.equals(Point.ZERO)) return false;
  const R = sum.toAffine();
  return R.x === r && (R.y & 1n) === BigInt(v - 27);
}

/**
 * The public keys of signers met lately. A key is recovered from each signature until the caller
 * admits its signer (a voucher of a funded channel was taken: someone paid for that), then checked
 * against its precomputed multiples. Keys met but not admitted (anyone can sign with a fresh key)
 * wait apart, without tables, and never push an admitted key out.
 */
export class SignerKeys {
  private readonly met = new Map<string, Point>();
  private readonly admitted = new Map<string, Point>();

  constructor(
    private readonly maxKeys = MAX_KEYS,
    private readonly recover: typeof recoverPublicKey = recoverPublicKey,
  ) {}

  /** Whether `signer` signed the 32-byte `hash` with `signature`, as ecrecover would find. */
  async signedBy(hash: Hex, signature: Hex, signer: Address): Promise<boolean> {
    const parts = recoverableSignature(signature);
    if (!parts || hash.length !== 2 + 64 || !isHex(hash, { strict: true })) return false;
    const id = signer.toLowerCase();
    const known = this.admitted.get(id);
    if (known) {
      rememberLast(this.admitted, id, known, this.maxKeys);
      return signedWithKey(hash, parts, known);
    }
    let publicKey: Hex;
    try {
      publicKey = await this.recover({ hash, signature });
    } catch {
      return false;
    }
    if (!isAddressEqual(publicKeyToAddress(publicKey), signer)) return false;
    // Kept under the address its own key gives: nothing can be kept under another's address.
    if (!this.admitted.has(id)) rememberLast(this.met, id, Point.fromHex(publicKey.slice(2)), MAX_MET);
    return true;
  }

  /** `signer`'s later signatures are checked against its key (met in a signature signedBy() found its), its table built now. */
  admit(signer: Address): void {
    const id = signer.toLowerCase();
    const key = this.met.get(id);
    if (!key) return;
    this.met.delete(id);
    rememberLast(this.admitted, id, secp256k1.utils.precompute(KEY_WINDOW, key), this.maxKeys);
  }

  /** Whether `signer`'s signatures are checked against its key. */
  knows(signer: Address): boolean {
    return this.admitted.has(signer.toLowerCase());
  }
}
