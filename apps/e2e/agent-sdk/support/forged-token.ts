import { base64urlEncodeUtf8 } from '@crawlgate/core';

/** A token of `payload`, with a made-up MAC of the right length: the gate refuses it, the agent cannot tell. */
export const forgedToken = (payload: object): string =>
  `${base64urlEncodeUtf8(JSON.stringify(payload))}.${'A'.repeat(43)}`;
