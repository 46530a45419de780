export {
  catalogueIpSources,
  createCrawlerIps,
  type AddressCheck,
  type CrawlerIps,
  type CrawlerIpsOptions,
} from './crawler-ips';
export { isInternalAddress, parseIp, withoutPort } from './ip-prefix';
export { catalogueReverseDns, createReverseDns, type DnsResolver, type ReverseDnsOptions } from './reverse-dns';
