import type { LookupAddress } from 'node:dns';

/** For tests: a resolver that answers `addresses` for every name, as a public DNS record pointing anywhere would. */
export const resolvingTo = (...addresses: string[]) => {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
};
