/*
 * Known crawlers: their names, categories and operators, and the User-Agent token each sends. Our
 * own list, checked against operators' documentation and the public lists (ai.robots.txt, Dark
 * Visitors, Cloudflare's verified bots, server logs). Defined here once: the middleware compiles
 * the tokens into its classifier (libs/middleware/src/bots/catalogue.ts), and the API accepts a
 * bot policy naming exactly these crawlers.
 *
 * Order is priority: the first signature that matches names the visitor. So a longer token comes
 * before any token it contains ("Applebot-Extended" before "Applebot", "Googlebot-Image" before
 * "Googlebot", "TelegramBot (like TwitterBot)" before "Twitterbot"), AI groups come before the
 * rest, and HTTP libraries come last because real crawlers often embed them ("LinkedInBot/1.0
 * (compatible; Mozilla/5.0; Apache-HttpClient …)").
 *
 * A string `match` is a regular-expression source matched case-insensitively on a token
 * boundary: no letter or digit may touch it on either side, so "-", "/", ";" and spaces do, and
 * "Googlebot" also names "Googlebot-Mobile/2.1". Without `match`, the name itself is the token.
 * A RegExp `match` is used as written (flags "i").
 *
 * Adding a crawler: put it above anything its token contains, and run libs/middleware/src/bots/*.spec.ts;
 * every entry must classify its own name as itself.
 */

import type { BotCategory } from './bot-policy';

/** One crawler of the catalogue. */
export interface BotCatalogueEntry {
  /** Stable name: what the middleware reports and what a bot policy is keyed by. */
  readonly name: string;
  readonly category: BotCategory;
  /** Who runs it. */
  readonly operator: string;
  /** The User-Agent token (see above); the name itself when absent. */
  readonly match?: string | RegExp;
  /** The operator's documentation of the crawler. */
  readonly url?: string;
  /**
   * A robots.txt product token that no crawler sends as its User-Agent (Google-Extended,
   * Applebot-Extended): the operator crawls under its main agent and uses the token only to read
   * robots.txt rules, so a User-Agent match can never tell these requests apart.
   */
  readonly robotsTxtOnly?: true;
  /**
   * The origin whose Web Bot Auth key directory signs this crawler's requests. A valid signature
   * from it identifies the crawler whatever the User-Agent says; a request whose User-Agent names
   * it without one is unverified, and never allowed.
   */
  readonly signatureAgent?: string;
  /** Sends a browser's User-Agent: only its signature (signatureAgent) identifies it. */
  readonly signedOnly?: true;
  /**
   * Where the operator publishes the IP ranges this crawler fetches from (JSON: `{ "prefixes": [{
   * "ipv4Prefix" | "ipv6Prefix": "…/n" }] }`, the form Google, Bing, Apple, OpenAI and Perplexity
   * use). A request whose User-Agent names the crawler from outside them is unverified, and
   * never allowed. Not for a crawler that signs (signatureAgent): only its signature verifies it.
   */
  readonly ipRanges?: string;
  /**
   * The domains under which the operator documents its crawlers' host names, for operators that
   * publish no ranges (Yandex, Baidu, Bing's other crawlers…): a request naming the crawler is
   * verified when its address's reverse DNS name is under one of them and resolves back to the
   * address (forward-confirmed reverse DNS). Otherwise it is unverified, and never allowed.
   */
  readonly reverseDns?: readonly string[];
}

type Row = Omit<BotCatalogueEntry, 'category'>;

const OPENAI = 'https://platform.openai.com/docs/bots';
/** OpenAI signs ChatGPT's requests (help.openai.com/en/articles/11845367: Signature-Agent "https://chatgpt.com"). */
const CHATGPT_SIGNER = 'https://chatgpt.com';
const ANTHROPIC = 'https://support.claude.com/en/articles/8896518';
const PERPLEXITY = 'https://docs.perplexity.ai/guides/bots';
const GOOGLE = 'https://developers.google.com/search/docs/crawling-indexing/overview-google-crawlers';
const META = 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers';
const APPLE = 'https://support.apple.com/en-us/119829';
const AMAZON = 'https://developer.amazon.com/amazonbot';
const BING = 'https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0';
// Bing: "verify that it resolves to a name that end with search.msn.com" (how-to-verify-bingbot-3905dc26).
const BING_HOSTS = ['search.msn.com'];
// Yandex: "All Yandex robot names end in yandex.ru, yandex.net, or yandex.com" (check-yandex-robots.html).
const YANDEX_HOSTS = ['yandex.ru', 'yandex.net', 'yandex.com'];

/**
 * The operators' published IP ranges (their verification pages link them). Google's lists moved
 * from search/apis/ipranges/ to crawling/ipranges/ in 2026, googlebot.json becoming
 * common-crawlers.json; the old addresses redirect. Anthropic publishes one list for all its crawlers.
 */
const ANTHROPIC_RANGES = 'https://claude.com/crawling/bots.json';
const GOOGLE_COMMON_CRAWLERS = 'https://developers.google.com/static/crawling/ipranges/common-crawlers.json';
const GOOGLE_SPECIAL_CRAWLERS = 'https://developers.google.com/static/crawling/ipranges/special-crawlers.json';
const GOOGLE_USER_TRIGGERED =
  'https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json';

/** Fetches a page because a person asked an assistant or agent about it, now. */
const AI_ASSISTANT: Row[] = [
  {
    name: 'ChatGPT-User',
    operator: 'OpenAI',
    url: OPENAI,
    signatureAgent: CHATGPT_SIGNER,
  },
  // ChatGPT's browsing agent sends a Chrome User-Agent and signs every request.
  {
    name: 'ChatGPT agent',
    operator: 'OpenAI',
    url: 'https://help.openai.com/en/articles/11845367',
    signatureAgent: CHATGPT_SIGNER,
    signedOnly: true,
  },
  { name: 'Claude-User', operator: 'Anthropic', url: ANTHROPIC, ipRanges: ANTHROPIC_RANGES },
  { name: 'Claude-Web', operator: 'Anthropic', url: ANTHROPIC, ipRanges: ANTHROPIC_RANGES },
  {
    name: 'Perplexity-User',
    operator: 'Perplexity',
    url: PERPLEXITY,
    ipRanges: 'https://www.perplexity.ai/perplexity-user.json',
  },
  { name: 'MistralAI-User', operator: 'Mistral AI', url: 'https://docs.mistral.ai/robots' },
  { name: 'Meta-ExternalFetcher', operator: 'Meta', url: META },
  { name: 'Amzn-User', operator: 'Amazon' },
  { name: 'NovaAct', operator: 'Amazon' },
  { name: 'Google-NotebookLM', operator: 'Google', match: '(?:Google-)?NotebookLM', url: GOOGLE },
  { name: 'Gemini-Deep-Research', operator: 'Google' },
  { name: 'Google-CloudVertexBot', operator: 'Google', match: '(?:Google-)?CloudVertexBot', url: GOOGLE },
  { name: 'cohere-ai', operator: 'Cohere' },
  { name: 'Manus-User', operator: 'Manus' },
  { name: 'kagi-fetcher', operator: 'Kagi' },
  { name: 'FirecrawlAgent', operator: 'Firecrawl' },
  { name: 'QuillBot', operator: 'QuillBot', match: 'QuillBot(?:\\.com)?' },
  // Semrush's AI writing tools; must precede the SemrushBot SEO crawler, whose token they contain.
  { name: 'SemrushBot-OCOB', operator: 'Semrush' },
  { name: 'SemrushBot-SWA', operator: 'Semrush' },
];

/** Indexes pages for an AI answer engine, which cites and links them. */
const AI_SEARCH: Row[] = [
  { name: 'OAI-SearchBot', operator: 'OpenAI', url: OPENAI, ipRanges: 'https://openai.com/searchbot.json' },
  { name: 'Claude-SearchBot', operator: 'Anthropic', url: ANTHROPIC, ipRanges: ANTHROPIC_RANGES },
  {
    name: 'PerplexityBot',
    operator: 'Perplexity',
    url: PERPLEXITY,
    ipRanges: 'https://www.perplexity.ai/perplexitybot.json',
  },
  { name: 'DuckAssistBot', operator: 'DuckDuckGo', url: 'https://duckduckgo.com/duckassistbot' },
  { name: 'YouBot', operator: 'You.com', url: 'https://about.you.com/youbot/' },
  { name: 'meta-webindexer', operator: 'Meta', url: META },
  { name: 'Amzn-SearchBot', operator: 'Amazon' },
  { name: 'amazon-kendra', operator: 'Amazon' },
  { name: 'bedrockbot', operator: 'Amazon' },
  { name: 'AzureAI-SearchBot', operator: 'Microsoft' },
  {
    name: 'YandexAdditional',
    operator: 'Yandex',
    match: 'YandexAdditional(?:Bot)?',
    url: 'https://yandex.com/bots',
    reverseDns: YANDEX_HOSTS,
  },
  { name: 'PhindBot', operator: 'Phind' },
  { name: 'iAskBot', operator: 'iAsk', match: 'iAskBot|iaskspider' },
  { name: 'ExaBot', operator: 'Exa' },
  { name: 'TavilyBot', operator: 'Tavily' },
  { name: 'LinkupBot', operator: 'Linkup' },
  { name: 'Andibot', operator: 'Andi' },
  { name: 'Anomura', operator: 'Direqt' },
  { name: 'Channel3Bot', operator: 'Channel3' },
  { name: 'atlassian-bot', operator: 'Atlassian' },
  { name: 'Cloudflare-AutoRAG', operator: 'Cloudflare' },
];

/** Collects pages for model training or for data sets sold or published for it. */
const AI_TRAINING: Row[] = [
  { name: 'GPTBot', operator: 'OpenAI', url: OPENAI, ipRanges: 'https://openai.com/gptbot.json' },
  { name: 'ClaudeBot', operator: 'Anthropic', url: ANTHROPIC, ipRanges: ANTHROPIC_RANGES },
  { name: 'anthropic-ai', operator: 'Anthropic', url: ANTHROPIC, ipRanges: ANTHROPIC_RANGES },
  // Control tokens only: Google and Apple fetch as Googlebot and Applebot and apply these tokens'
  // robots.txt rules to what they may train on. Listed so that policies can name them knowingly.
  { name: 'Google-Extended', operator: 'Google', url: GOOGLE, robotsTxtOnly: true },
  { name: 'Applebot-Extended', operator: 'Apple', url: APPLE, robotsTxtOnly: true },
  { name: 'Webzio-Extended', operator: 'Webz.io', robotsTxtOnly: true },
  // Google's catch-all fetcher for research and non-Search products (and its -Image/-Video forms).
  { name: 'GoogleOther', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'meta-externalagent', operator: 'Meta', url: META },
  // Meta documents FacebookBot as training its speech-recognition language models; previews are facebookexternalhit.
  { name: 'FacebookBot', operator: 'Meta', url: META },
  { name: 'Amazonbot', operator: 'Amazon', url: AMAZON, reverseDns: ['crawl.amazonbot.amazon'] },
  { name: 'Bytespider', operator: 'ByteDance' },
  { name: 'TikTokSpider', operator: 'ByteDance' },
  { name: 'CCBot', operator: 'Common Crawl', url: 'https://commoncrawl.org/ccbot' },
  { name: 'cohere-training-data-crawler', operator: 'Cohere' },
  { name: 'DeepSeekBot', operator: 'DeepSeek' },
  { name: 'AI2Bot', operator: 'Allen Institute for AI', url: 'https://allenai.org/crawler' },
  { name: 'PanguBot', operator: 'Huawei' },
  { name: 'ChatGLM-Spider', operator: 'Zhipu AI' },
  { name: 'Diffbot', operator: 'Diffbot', url: 'https://www.diffbot.com' },
  { name: 'ImagesiftBot', operator: 'Hive', url: 'https://imagesift.com/about' },
  { name: 'Omgilibot', operator: 'Webz.io', match: 'omgili(?:bot)?' },
  { name: 'Timpibot', operator: 'Timpi', url: 'https://timpi.io' },
  { name: 'Kangaroo Bot', operator: 'Kangaroo LLM' },
  { name: 'img2dataset', operator: 'LAION' },
  { name: 'LAIONDownloader', operator: 'LAION' },
  { name: 'laion-huggingface-processor', operator: 'LAION' },
  { name: 'Cotoyogi', operator: 'ROIS-DS' },
  { name: 'SBIntuitionsBot', operator: 'SB Intuitions' },
  { name: 'ICC-Crawler', operator: 'NICT' },
  { name: 'VelenPublicWebCrawler', operator: 'Velen' },
  { name: 'Brightbot', operator: 'Bright Data' },
  { name: 'FriendlyCrawler', operator: 'unknown' },
  { name: 'Crawl4AI', operator: 'Crawl4AI (open source)' },
  { name: 'aiHitBot', operator: 'aiHit' },
  { name: 'Factset_spyderbot', operator: 'FactSet' },
  { name: 'Sidetrade indexer bot', operator: 'Sidetrade' },
  { name: 'Poseidon Research Crawler', operator: 'Poseidon Research' },
  { name: 'Panscient', operator: 'Panscient', match: 'panscient(?:\\.com)?' },
];

/** Classic web search: sends readers back. Allowed by default. */
const SEARCH_ENGINE: Row[] = [
  { name: 'Googlebot-Image', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'Googlebot-Video', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'Googlebot-News', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'Googlebot', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'Storebot-Google', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'AdsBot-Google', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_SPECIAL_CRAWLERS },
  { name: 'Mediapartners-Google', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_SPECIAL_CRAWLERS },
  { name: 'bingbot', operator: 'Microsoft', url: BING, ipRanges: 'https://www.bing.com/toolbox/bingbot.json' },
  { name: 'BingPreview', operator: 'Microsoft', url: BING, reverseDns: BING_HOSTS },
  { name: 'msnbot', operator: 'Microsoft', url: BING, reverseDns: BING_HOSTS },
  { name: 'adidxbot', operator: 'Microsoft', url: BING, reverseDns: BING_HOSTS },
  { name: 'Applebot', operator: 'Apple', url: APPLE, ipRanges: 'https://search.developer.apple.com/applebot.json' },
  { name: 'DuckDuckGo-Favicons-Bot', operator: 'DuckDuckGo' },
  {
    name: 'DuckDuckBot',
    operator: 'DuckDuckGo',
    url: 'https://duckduckgo.com/duckduckbot',
    ipRanges: 'https://duckduckgo.com/duckduckbot.json',
  },
  // YandexBot, YandexMobileBot, YandexRenderResourcesBot…; YandexAdditional (AI) is listed above.
  {
    name: 'YandexBot',
    operator: 'Yandex',
    match: 'Yandex[a-z]*Bot',
    url: 'https://yandex.com/bots',
    reverseDns: YANDEX_HOSTS,
  },
  { name: 'YandexImages', operator: 'Yandex', url: 'https://yandex.com/bots', reverseDns: YANDEX_HOSTS },
  {
    name: 'Baiduspider',
    operator: 'Baidu',
    url: 'https://www.baidu.com/search/spider.html',
    reverseDns: ['baidu.com', 'baidu.jp'],
  },
  // Yahoo's search blog: "The name of all Yahoo! Search crawlers will end with crawl.yahoo.net".
  { name: 'Yahoo! Slurp', operator: 'Yahoo', match: 'Slurp', reverseDns: ['crawl.yahoo.net'] },
  { name: 'Sogou', operator: 'Sogou', match: 'Sogou [a-z]+ spider' },
  { name: '360Spider', operator: 'Qihoo 360' },
  { name: 'Yeti', operator: 'Naver' },
  { name: 'Daum', operator: 'Kakao', match: 'Daum(?:oa)?' },
  {
    name: 'SeznamBot',
    operator: 'Seznam',
    url: 'https://napoveda.seznam.cz/en/seznambot-crawler',
    reverseDns: ['seznam.cz'],
  },
  { name: 'coccocbot', operator: 'Cốc Cốc' },
  { name: 'Qwantbot', operator: 'Qwant', match: 'Qwantbot|Qwantify' },
  { name: 'MojeekBot', operator: 'Mojeek' },
  { name: 'PetalBot', operator: 'Huawei', url: 'https://webmaster.petalsearch.com/site/petalbot' },
  { name: 'Bravebot', operator: 'Brave' },
  { name: 'SeekportBot', operator: 'Seekport' },
];

/**
 * Fetchers that fetch whatever URL a person gives them and show or hand over what they got:
 * Google's Rich Results Test and URL Inspection (Google-InspectionTool), Sheets' IMPORTXML and
 * Apps Script (APIs-Google, whose token GoogleDocs' User-Agent carries), feed readers
 * (FeedFetcher-Google), page testers (Lighthouse in PageSpeed Insights, GTmetrix: a full-page
 * screenshot), and the AMP cache (Google-AMPHTML: it serves an AMP page it fetched to anyone, at
 * cdn.ampproject.org). Google's come from Google's network, so their address verifies them, but anyone
 * can send any of them to any page: allowed, they would be an open proxy. Charged by default, as
 * automation; a site allows them by name for its own testing.
 */
const USER_TRIGGERED_FETCHERS: Row[] = [
  { name: 'Google-InspectionTool', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_COMMON_CRAWLERS },
  { name: 'APIs-Google', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_USER_TRIGGERED },
  { name: 'FeedFetcher-Google', operator: 'Google', url: GOOGLE, ipRanges: GOOGLE_USER_TRIGGERED },
  { name: 'Google-AMPHTML', operator: 'Google', url: GOOGLE },
  { name: 'Chrome-Lighthouse', operator: 'Google (PageSpeed Insights)' },
  { name: 'GTmetrix', operator: 'GTmetrix' },
];

/** Link indexes and site audits. Charged by default: see bot-policy.ts. */
const SEO: Row[] = [
  { name: 'AhrefsSiteAudit', operator: 'Ahrefs', url: 'https://ahrefs.com/robot' },
  { name: 'AhrefsBot', operator: 'Ahrefs', url: 'https://ahrefs.com/robot' },
  { name: 'SiteAuditBot', operator: 'Semrush', url: 'https://www.semrush.com/bot/' },
  { name: 'SemrushBot', operator: 'Semrush', url: 'https://www.semrush.com/bot/' },
  { name: 'MJ12bot', operator: 'Majestic', url: 'https://mj12bot.com/' },
  { name: 'DotBot', operator: 'Moz', url: 'https://moz.com/help/moz-procedures/crawlers/dotbot' },
  { name: 'rogerbot', operator: 'Moz' },
  { name: 'BLEXBot', operator: 'WebMeUp' },
  { name: 'DataForSeoBot', operator: 'DataForSEO' },
  { name: 'serpstatbot', operator: 'Serpstat' },
  { name: 'SeobilityBot', operator: 'Seobility' },
  { name: 'Barkrowler', operator: 'Babbar' },
  { name: 'SEOkicks', operator: 'SEOkicks' },
  { name: 'MegaIndex', operator: 'MegaIndex', match: 'MegaIndex\\.ru' },
  { name: 'linkdexbot', operator: 'Linkdex' },
  { name: 'Screaming Frog SEO Spider', operator: 'Screaming Frog' },
  { name: 'Sitebulb', operator: 'Sitebulb' },
];

/** Fetches one page to draw a link card where someone shared it. Allowed by default. */
const SOCIAL_PREVIEW: Row[] = [
  { name: 'facebookexternalhit', operator: 'Meta', match: 'facebookexternalhit|Facebot', url: META },
  // Sends "TelegramBot (like TwitterBot)": must precede Twitterbot.
  { name: 'TelegramBot', operator: 'Telegram' },
  { name: 'Twitterbot', operator: 'X' },
  { name: 'LinkedInBot', operator: 'LinkedIn' },
  { name: 'Slackbot', operator: 'Slack', match: 'Slackbot|Slack-ImgProxy', url: 'https://api.slack.com/robots' },
  { name: 'Discordbot', operator: 'Discord' },
  { name: 'WhatsApp', operator: 'Meta' },
  // The crawler says "Pinterest/0.2 (+https://www.pinterest.com/bot.html)"; the app says "Pinterest for Android".
  {
    name: 'Pinterestbot',
    operator: 'Pinterest',
    match: /(?<![a-z0-9])Pinterestbot(?![a-z0-9])|^Pinterest\/\d/i,
    url: 'https://help.pinterest.com/en/business/article/pinterest-crawler',
    reverseDns: ['pinterest.com'],
  },
  { name: 'redditbot', operator: 'Reddit' },
  { name: 'Embedly', operator: 'Embedly' },
  { name: 'Iframely', operator: 'Iframely' },
  { name: 'SkypeUriPreview', operator: 'Microsoft' },
  { name: 'MicrosoftPreview', operator: 'Microsoft' },
  { name: 'vkShare', operator: 'VK' },
  { name: 'Mastodon', operator: 'Mastodon servers' },
  { name: 'Bluesky Cardyb', operator: 'Bluesky', match: 'Cardyb' },
];

/**
 * HTTP libraries, headless browsers and scraping frameworks: no crawler identity at all. Charged
 * by default; a site whose own tools use one of these can allow it by name.
 */
const AUTOMATION: Row[] = [
  { name: 'HeadlessChrome', operator: 'Chromium (headless)' },
  { name: 'PhantomJS', operator: 'PhantomJS' },
  { name: 'Scrapy', operator: 'Scrapy' },
  { name: 'Apache Nutch', operator: 'Apache', match: 'Nutch' },
  { name: 'Heritrix', operator: 'Internet Archive (open source)' },
  { name: 'HTTrack', operator: 'HTTrack' },
  // Before curl, which Symfony's names ("Symfony HttpClient/Curl"). Invoke-WebRequest's default
  // starts like a browser's: "Mozilla/5.0 (Windows NT; …) WindowsPowerShell/5.1".
  { name: 'PowerShell', operator: 'Microsoft', match: /(?<![a-z0-9])(?:Windows)?PowerShell\/\d/i },
  { name: 'Faraday', operator: 'Ruby Faraday', match: /^Faraday v\d/i },
  { name: 'Symfony HttpClient', operator: 'Symfony (PHP)', match: /^Symfony HttpClient/i },
  { name: 'curl', operator: 'curl' },
  { name: 'Wget', operator: 'GNU' },
  { name: 'python-requests', operator: 'Python requests' },
  { name: 'Python-urllib', operator: 'Python' },
  { name: 'python-httpx', operator: 'Python httpx' },
  { name: 'aiohttp', operator: 'Python aiohttp' },
  { name: 'Go-http-client', operator: 'Go' },
  { name: 'node-fetch', operator: 'node-fetch' },
  { name: 'undici', operator: 'Node.js' },
  // Node.js 21+ fetch sends the bare "node".
  { name: 'node', operator: 'Node.js', match: /^node$/i },
  { name: 'axios', operator: 'axios' },
  { name: 'okhttp', operator: 'Square' },
  { name: 'Apache-HttpClient', operator: 'Apache' },
  { name: 'Java', operator: 'Java HttpURLConnection', match: /^Java\/\d/i },
  { name: 'libwww-perl', operator: 'Perl' },
  { name: 'GuzzleHttp', operator: 'Guzzle (PHP)' },
  { name: 'Ruby', operator: 'Ruby Net::HTTP', match: /^Ruby$/i },
  { name: 'Deno', operator: 'Deno', match: /^Deno\/\d/i },
  { name: 'Bun', operator: 'Bun', match: /^Bun\/\d/i },
  { name: 'Dart', operator: 'Dart', match: /^Dart\/[\d.]+ \(dart:io\)/i },
  { name: 'HTTPie', operator: 'HTTPie' },
  { name: 'PostmanRuntime', operator: 'Postman' },
];

const GROUPS: readonly [BotCategory, Row[]][] = [
  ['ai-assistant', AI_ASSISTANT],
  ['ai-search', AI_SEARCH],
  ['ai-training', AI_TRAINING],
  ['search-engine', SEARCH_ENGINE],
  ['automation', USER_TRIGGERED_FETCHERS],
  ['seo', SEO],
  ['social-preview', SOCIAL_PREVIEW],
  ['automation', AUTOMATION],
];

/** Every catalogued crawler, in priority order. */
export const BOT_CATALOGUE_ENTRIES: readonly BotCatalogueEntry[] = Object.freeze(
  GROUPS.flatMap(([category, rows]) => rows.map((row) => Object.freeze({ ...row, category }))),
);

/** Names the classifier gives visitors that match no catalogue entry (both in category 'automation'). */
export const UNKNOWN_CRAWLER = 'unknown-crawler';
export const UNKNOWN_AUTOMATION = 'unknown-automation';

/** Whether `name` is one of those two: a group of visitors no catalogue entry names, not one crawler. */
export const isUnnamedCrawler = (name: string): boolean => name === UNKNOWN_CRAWLER || name === UNKNOWN_AUTOMATION;

/** A name a bot policy may use: a catalogued crawler or one of the two unknown names. */
export interface PolicyBotName {
  /** As the catalogue spells it. */
  readonly name: string;
  readonly category: BotCategory;
  readonly robotsTxtOnly: boolean;
  /** Nothing but its User-Agent identifies it: a catalogue crawler with no published ranges, host names or signature. */
  readonly takenAtItsName: boolean;
  /** Its place in the catalogue's order (the unknown names last), for listing a policy's bots. */
  readonly rank: number;
}

const POLICY_NAMES = new Map<string, PolicyBotName>(
  [
    ...BOT_CATALOGUE_ENTRIES.map((bot) => ({
      name: bot.name,
      category: bot.category,
      robotsTxtOnly: bot.robotsTxtOnly === true,
      takenAtItsName: !bot.ipRanges && !bot.signatureAgent && !bot.reverseDns,
    })),
    { name: UNKNOWN_CRAWLER, category: 'automation' as const, robotsTxtOnly: false, takenAtItsName: false },
    { name: UNKNOWN_AUTOMATION, category: 'automation' as const, robotsTxtOnly: false, takenAtItsName: false },
  ].map((entry, rank) => [entry.name.toLowerCase(), Object.freeze({ ...entry, rank })]),
);

/** The crawler a policy name means, in any case ("gptbot" is GPTBot); undefined for a name we do not know. */
export function policyBotName(name: string): PolicyBotName | undefined {
  return POLICY_NAMES.get(name.toLowerCase());
}

/**
 * What allowing `crawler` opens when the gate cannot verify it (no published IP ranges or host
 * names, no signature): its name in a User-Agent is all it takes, and anyone can write it. Null for a crawler
 * the gate verifies and for a name outside the catalogue (the unknown groups say so themselves).
 */
export function unverifiedAllowWarning(crawler: string): string | null {
  const known = policyBotName(crawler);
  if (!known?.takenAtItsName) return null;
  return `Allowed on its name alone: the gate cannot verify ${known.name}, so anyone who sends that User-Agent gets your pages free`;
}
