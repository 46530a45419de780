/*
 * What a publisher does to prove a payout address another publisher names: sign core's text with
 * the address's key, then send the signature. The command printed signs the text built here (the
 * one the API checks), quoted for the shell, and has Foundry ask for the key: a key given as an
 * argument stays in the shell's history and shows in the process list.
 */

import { payoutProofMessage } from '@crawlgate/core';
import { shellWord } from './shell-word';

export function payoutProofSteps(address: string, publisherId: string): string {
  const message = payoutProofMessage(address, publisherId);
  return [
    `Another publisher names ${address} as its payout address. If you hold it, sign this text with`,
    'its key (EIP-191, personal_sign), with any wallet or with Foundry, which asks for the key:',
    '',
    `  ${message}`,
    '',
    `  cast wallet sign --interactive ${shellWord(message)}`,
    '',
    `then run \`crawlgate payout set ${shellWord(address)} --proof <signature>\`.`,
  ].join('\n');
}
