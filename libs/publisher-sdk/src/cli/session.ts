import { isLoopbackHost } from '@crawlgate/core';
import { PublisherClient } from '../client';
import { apiBaseUrl } from '../http';
import { configPath, readConfig } from './config';
import { CliError, UsageError } from './errors';
import type { CliIo } from './io';
import { stringValue, type Values } from './command';

const LOGIN_HINT = 'run `crawlgate login --api <url> --email <email>` (or set CRAWLGATE_API_URL and CRAWLGATE_API_KEY)';

export interface Session {
  client: PublisherClient;
  /** As given (--api, CRAWLGATE_API_URL or the saved URL), without trailing slashes. */
  apiUrl: string;
  /** Where the key came from: CRAWLGATE_API_KEY, or the config file (for the API it was saved for). */
  keyFrom: 'env' | 'config';
  configPath: string;
}

/** A client for commands that need the key: --api, CRAWLGATE_API_URL or the saved URL; CRAWLGATE_API_KEY or the saved key. */
export async function openSession(values: Values, io: CliIo): Promise<Session> {
  const path = configPath(io.env);
  const envUrl = io.env.CRAWLGATE_API_URL || undefined;
  const flagUrl = stringValue(values, 'api');
  const givenUrl = flagUrl ?? envUrl;
  // The environment's key goes to the API the environment names (never another named by --api), or
  // else to the one --api names: never to the URL a config file saved for a key of its own.
  const anyEnvKey = io.env.CRAWLGATE_API_KEY || undefined;
  // Set alone, it names no API: the saved key would be used in its place without a word (a rotation
  // meant for a leaked CI key would rotate the saved account's).
  if (anyEnvKey !== undefined && givenUrl === undefined)
    throw new CliError(
      'CRAWLGATE_API_KEY is set, but no API for it: it is sent only to the API CRAWLGATE_API_URL or --api names, never to the one a config file saved for a key of its own. Set CRAWLGATE_API_URL, pass --api, or unset CRAWLGATE_API_KEY to use the saved login',
    );
  const envKey = envUrl === undefined || sameApi(givenUrl!, envUrl) ? anyEnvKey : undefined;
  // Read only when needed: a session given wholly by the environment does not depend on a config file.
  const config = givenUrl !== undefined && envKey !== undefined ? {} : await readConfig(path);
  const apiUrl = givenUrl ?? config.apiUrl;
  if (apiUrl === undefined) throw new CliError(`No API URL: ${LOGIN_HINT}`);
  // The saved key belongs to the saved API: never send it to another server named by --api.
  const savedKey = config.apiKey && config.apiUrl && sameApi(apiUrl, config.apiUrl) ? config.apiKey : undefined;
  const apiKey = envKey ?? savedKey;
  if (apiKey === undefined) throw new CliError(`Not logged in to ${apiUrl}: ${LOGIN_HINT}`);
  return {
    client: newClient(apiUrl, io, apiKey),
    apiUrl: apiUrl.replace(/\/+$/, ''),
    keyFrom: envKey ? 'env' : 'config',
    configPath: path,
  };
}

export async function authedClient(values: Values, io: CliIo): Promise<PublisherClient> {
  return (await openSession(values, io)).client;
}

export function newClient(apiUrl: string, io: CliIo, apiKey?: string): PublisherClient {
  refuseCleartext(apiUrl, io.env);
  try {
    // refuseCleartext judged plain http, with the CLI's own switch (CRAWLGATE_ALLOW_HTTP).
    return new PublisherClient({ apiUrl, apiKey, fetch: io.fetch, allowPlainHttp: true });
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

/** The password and the API key never cross a network in clear text, unless the user says the network is trusted. */
function refuseCleartext(apiUrl: string, env: CliIo['env']): void {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return; // the client says what is wrong with it
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && env.CRAWLGATE_ALLOW_HTTP !== '1')
    throw new UsageError(
      `${url.origin} is plain http: your password and API key would cross the network readable by anyone on the way. Use https, or set CRAWLGATE_ALLOW_HTTP=1 on a network you trust.`,
    );
}
