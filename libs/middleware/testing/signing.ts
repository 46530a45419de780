/*
 * Hand-made Web Bot Auth signatures for attack tests: any covered components and parameters, any
 * Signature-Agent text, signed with any key, so each check of the verifier can be tried alone.
 * (Well-formed signatures come from core's createWebBotAuthSigner, as the agent SDK sends them.)
 */

import {
  base64Encode,
  importEd25519PrivateKey,
  jwkThumbprint,
  parseSfDictionary,
  signatureBase,
  signEd25519,
  type Ed25519PrivateJwk,
  type SfInnerList,
} from '@crawlgate/core';

export interface HandSigned {
  key: Ed25519PrivateJwk;
  method?: string;
  /** Absolute: its host is the signed @authority. */
  url: string;
  headers?: Record<string, string>;
  /** The Signature-Agent header as sent; omitted when null. Default: sig1="<agent>". */
  agentHeader?: string | null;
  agent?: string;
  /** Default ("@authority" "@method" "@path" "signature-agent";key="sig1"). */
  components?: string;
  /** Default: created now, expires in 60 s, keyid of `key`, a random nonce, tag web-bot-auth. */
  params?: string;
  created?: number;
  expires?: number;
  label?: string;
}

let counter = 0;

export async function handSigned(options: HandSigned): Promise<Record<string, string>> {
  const created = options.created ?? Math.floor(Date.now() / 1000);
  const params =
    options.params ??
    `;created=${created};expires=${options.expires ?? created + 60};keyid="${jwkThumbprint(options.key)}";nonce="n-${Date.now()}-${counter++}";tag="web-bot-auth"`;
  const components = options.components ?? '("@authority" "@method" "@path" "signature-agent";key="sig1")';
  const label = options.label ?? 'sig1';
  const headers: Record<string, string> = { ...options.headers };
  const agentHeader = options.agentHeader === undefined ? `sig1="${options.agent}"` : options.agentHeader;
  if (agentHeader !== null) headers['signature-agent'] = agentHeader;
  const input = `${label}=${components}${params}`;
  const inner = parseSfDictionary(input)?.get(label) as SfInnerList;
  const url = new URL(options.url);
  const base = signatureBase(
    {
      method: options.method ?? 'GET',
      authority: url.host,
      path: url.pathname,
      query: url.search,
      header: (name) => headers[name],
    },
    inner,
  );
  if (base === null) throw new Error(`handSigned: no base for ${input}`);
  const signature = await signEd25519(await importEd25519PrivateKey(options.key), base);
  return { ...headers, 'signature-input': input, signature: `${label}=:${base64Encode(signature)}:` };
}
