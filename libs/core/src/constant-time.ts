/**
 * Compares two byte strings in time that depends only on their lengths, never on where they
 * differ, so a MAC cannot be guessed byte by byte. Lengths are not secret (a MAC's size is public).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ (b[i] ?? 0);
  return diff === 0;
}
