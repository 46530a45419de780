import { PublisherClient } from '../client';
import { apiBaseUrl } from '../http';
import { configPath, readConfig } from './config';
import { CliError, UsageError } from './errors';
import type { CliIo } from './io';
import { stringValue, type Values } from './command';

const LOGIN_HINT = 'run `crawlgate login --api <url> --email <email>` (or set CRAWLGATE_API_URL and CRAWLGATE_API_KEY)';

/** A client for commands that need the key: --api, CRAWLGATE_API_URL or the saved URL; CRAWLGATE_API_KEY or the saved key. */
export async function authedClient(values: Values, io: CliIo): Promise<PublisherClient> {
  const config = await readConfig(configPath(io.env));
  const apiUrl = stringValue(values, 'api') ?? (io.env.CRAWLGATE_API_URL || undefined) ?? config.apiUrl;
  if (apiUrl === undefined) throw new CliError(`No API URL: ${LOGIN_HINT}`);
  // The saved key belongs to the saved API: never send it to another server named by --api.
  const savedKey = config.apiKey && config.apiUrl && sameApi(apiUrl, config.apiUrl) ? config.apiKey : undefined;
  const apiKey = io.env.CRAWLGATE_API_KEY || savedKey;
  if (apiKey === undefined) throw new CliError(`Not logged in to ${apiUrl}: ${LOGIN_HINT}`);
  return newClient(apiUrl, io, apiKey);
}

export function newClient(apiUrl: string, io: CliIo, apiKey?: string): PublisherClient {
  try {
    return new PublisherClient({ apiUrl, apiKey, fetch: io.fetch });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function sameApi(a: string, b: string): boolean {
  try {
    return apiBaseUrl(a) === apiBaseUrl(b);
  } catch {
    return false;
  }
}
