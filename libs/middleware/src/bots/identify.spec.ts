import { identifyVisitor } from './identify';
import type { SignatureCheck } from '../web-bot-auth';

const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const CHATGPT_USER =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const verified = (agent: string): SignatureCheck => ({
  status: 'verified',
  agent,
  keyid: 'k',
  covered: new Set(['@authority']),
});
const failed = (agent: string | null, status: 'invalid' | 'unverified' = 'invalid'): SignatureCheck => ({
  status,
  reason: 'test',
  agent,
  covered: new Set(),
});

describe('identifyVisitor', () => {
  it('identifies a verified chatgpt.com signature as ChatGPT agent whatever the User-Agent says', () => {
    for (const ua of [BROWSER, GOOGLEBOT, undefined]) {
      expect(identifyVisitor(ua, undefined, verified('https://chatgpt.com'))).toEqual({
        kind: 'bot',
        name: 'ChatGPT agent',
        category: 'ai-assistant',
        action: 'charge',
        operator: 'OpenAI',
        verified: true,
      });
    }
  });

  it('keeps the User-Agent name when that crawler signs with the verified origin', () => {
    expect(identifyVisitor(CHATGPT_USER, undefined, verified('https://chatgpt.com'))).toMatchObject({
      name: 'ChatGPT-User',
      verified: true,
    });
  });

  it('applies an allow to a verified crawler', () => {
    expect(
      identifyVisitor(BROWSER, { bots: { 'ChatGPT agent': 'allow' } }, verified('https://chatgpt.com')),
    ).toMatchObject({ action: 'allow', verified: true });
    expect(
      identifyVisitor(
        CHATGPT_USER,
        { bots: { 'chatgpt-user': 'allow' }, requireSignature: { bots: ['ChatGPT-User'] } },
        verified('https://chatgpt.com'),
      ),
    ).toMatchObject({ action: 'allow' });
  });

  it('names an unknown verified origin as an unknown agent run by its host', () => {
    expect(identifyVisitor(GOOGLEBOT, undefined, verified('https://agent.example'))).toEqual({
      kind: 'bot',
      name: 'unknown-automation',
      category: 'automation',
      action: 'charge',
      operator: 'agent.example',
      verified: true,
    });
  });

  it('reports no operator for a signer host the crawler counts could not carry', () => {
    expect(identifyVisitor(BROWSER, undefined, verified('https://[2001:db8::1]'))).toMatchObject({
      operator: null,
      verified: true,
    });
    expect(identifyVisitor(BROWSER, undefined, verified(`https://${'a'.repeat(60)}.example`))).toMatchObject({
      operator: null,
    });
    expect(identifyVisitor(BROWSER, undefined, verified('https://agent.example:8443'))).toMatchObject({
      operator: 'agent.example:8443',
    });
  });

  it('never allows an unsigned request whose User-Agent names a signing crawler', () => {
    expect(identifyVisitor(CHATGPT_USER, { bots: { 'ChatGPT-User': 'allow' } })).toMatchObject({
      name: 'ChatGPT-User',
      action: 'charge',
      verified: false,
    });
    expect(identifyVisitor(CHATGPT_USER, { categories: { 'ai-assistant': 'block' } })).toMatchObject({
      action: 'block',
    });
  });

  it('never allows a crawler the policy requires to sign without a verified signature, by name or category; block stays', () => {
    expect(identifyVisitor(GPTBOT, { bots: { GPTBot: 'allow' } })).toMatchObject({
      name: 'GPTBot',
      action: 'allow',
      verified: false,
    });
    expect(
      identifyVisitor(GPTBOT, { bots: { GPTBot: 'allow' }, requireSignature: { bots: ['gptbot'] } }),
    ).toMatchObject({ action: 'charge', verified: false });
    expect(
      identifyVisitor(GPTBOT, {
        categories: { 'ai-training': 'allow' },
        requireSignature: { categories: ['ai-training'] },
      }),
    ).toMatchObject({ action: 'charge' });
    expect(
      identifyVisitor(GPTBOT, { bots: { GPTBot: 'block' }, requireSignature: { bots: ['GPTBot'] } }),
    ).toMatchObject({ action: 'block' });
    expect(identifyVisitor(GOOGLEBOT, { requireSignature: { bots: ['GPTBot'] } })).toMatchObject({
      name: 'Googlebot',
      action: 'allow',
    });
  });

  it('treats a failed signature naming a known signer as that signer, unverified, never allowed', () => {
    for (const check of [failed('https://chatgpt.com'), failed('https://chatgpt.com', 'unverified')]) {
      expect(identifyVisitor(BROWSER, { bots: { 'ChatGPT agent': 'allow' } }, check)).toMatchObject({
        name: 'ChatGPT agent',
        action: 'charge',
        verified: false,
      });
    }
  });

  it('never takes a request with a failed signature for a person', () => {
    expect(identifyVisitor(BROWSER, undefined, failed(null))).toMatchObject({
      kind: 'bot',
      name: 'unknown-automation',
      action: 'charge',
      verified: false,
    });
    expect(identifyVisitor(BROWSER, undefined, failed('https://agent.example', 'unverified'))).toMatchObject({
      kind: 'bot',
      verified: false,
    });
  });

  it('leaves people and unsigned, non-signing crawlers as the User-Agent says', () => {
    expect(identifyVisitor(BROWSER, undefined)).toEqual({ kind: 'human' });
    expect(identifyVisitor(GOOGLEBOT, undefined)).toEqual({
      kind: 'bot',
      name: 'Googlebot',
      category: 'search-engine',
      action: 'allow',
      operator: 'Google',
      verified: false,
    });
  });
});
