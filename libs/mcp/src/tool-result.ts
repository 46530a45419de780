/*
 * Every tool answers through here: success as structured content (with its JSON in a text block,
 * for hosts that read only text), failure as `isError: true` with `{error: {code, message, …}}`
 * in the text block. Nothing a tool does may throw past this, nothing leaves it with the wallet
 * key in it, and a refusal is short whatever a site put in it.
 */

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bounded } from './bounded';
import { redactJson } from './redact';
import { refusalOf } from './refusals';
import type { WalletSession } from './session';

/**
 * Runs a tool's work and makes its result. `about` is the URL the call is about, for refusals
 * that do not name one themselves.
 */
export async function answer(
  session: WalletSession,
  tool: string,
  about: string | undefined,
  work: () => Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    const structured = await work();
    result = { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (error) {
    // Blanked before it is cut: a key cut in two would no longer be recognised.
    const refusal = bounded(redactJson(refusalOf(error, about), session.redact));
    session.log(
      `crawlgate-mcp: ${tool}${about === undefined ? '' : ` ${about}`} refused: ${refusal.code}: ${refusal.message}`,
    );
    // No structuredContent: clients check it against the tool's output schema, which describes success.
    result = { content: [{ type: 'text', text: JSON.stringify({ error: refusal }) }], isError: true };
  }
  return redactJson(result, session.redact);
}
