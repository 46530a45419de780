/** Injection token of the ChainContext. */
export const CHAIN = Symbol('CHAIN');
