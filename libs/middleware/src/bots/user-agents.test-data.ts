/*
 * Real User-Agent strings, as crawlers and browsers send them (from operators' documentation and
 * server logs). Test data only: nothing in the package imports this file.
 */

import type { BotCategory } from './types';

export const BOT_USER_AGENTS: readonly [ua: string, name: string, category: BotCategory][] = [
  // AI
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
    'GPTBot',
    'ai-training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
    'ChatGPT-User',
    'ai-assistant',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot',
    'OAI-SearchBot',
    'ai-search',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
    'ClaudeBot',
    'ai-training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
    'Claude-User',
    'ai-assistant',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)',
    'Claude-SearchBot',
    'ai-search',
  ],
  ['anthropic-ai', 'anthropic-ai', 'ai-training'],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
    'PerplexityBot',
    'ai-search',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
    'Perplexity-User',
    'ai-assistant',
  ],
  ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'CCBot', 'ai-training'],
  [
    'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)',
    'Bytespider',
    'ai-training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36',
    'Amazonbot',
    'ai-training',
  ],
  [
    'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
    'meta-externalagent',
    'ai-training',
  ],
  [
    'meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
    'Meta-ExternalFetcher',
    'ai-assistant',
  ],
  [
    'Mozilla/5.0 (compatible; FacebookBot/1.0; +https://developers.facebook.com/docs/sharing/webmasters/facebookbot/)',
    'FacebookBot',
    'ai-training',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)',
    'MistralAI-User',
    'ai-assistant',
  ],
  ['Mozilla/5.0 (compatible; DeepSeekBot/1.0; +https://www.deepseek.com/bot)', 'DeepSeekBot', 'ai-training'],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; DuckAssistBot/1.0; +http://duckduckgo.com/duckassistbot.html)',
    'DuckAssistBot',
    'ai-search',
  ],
  ['Mozilla/5.0 (compatible; cohere-ai/1.0; +http://www.cohere.ai/bot.html)', 'cohere-ai', 'ai-assistant'],
  ['Mozilla/5.0 (compatible; YouBot (+http://www.you.com))', 'YouBot', 'ai-search'],
  ['Mozilla/5.0 (compatible; Diffbot/0.1; +http://www.diffbot.com)', 'Diffbot', 'ai-training'],
  ['Mozilla/5.0 (compatible; ImagesiftBot; +imagesift.com)', 'ImagesiftBot', 'ai-training'],
  ['Mozilla/5.0 (compatible; omgilibot/0.5; +http://omgili.com)', 'Omgilibot', 'ai-training'],
  ['Mozilla/5.0 (compatible; Timpibot/0.9; +http://www.timpi.io)', 'Timpibot', 'ai-training'],
  ['Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)', 'AI2Bot', 'ai-training'],
  ['Mozilla/5.0 (compatible; YandexAdditionalBot/3.0; +http://yandex.com/bots)', 'YandexAdditional', 'ai-search'],
  ['Mozilla/5.0 (compatible; SemrushBot-SWA/0.1; +http://www.semrush.com/bot.html)', 'SemrushBot-SWA', 'ai-assistant'],
  // Search engines
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Googlebot', 'search-engine'],
  [
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Googlebot',
    'search-engine',
  ],
  ['Googlebot-Image/1.0', 'Googlebot-Image', 'search-engine'],
  ['Mozilla/5.0 (compatible; Google-InspectionTool/1.0)', 'Google-InspectionTool', 'automation'],
  ['Mozilla/5.0 (compatible; GoogleDocs; apis-google; +http://docs.google.com)', 'APIs-Google', 'automation'],
  [
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 (compatible; Google-AMPHTML)',
    'Google-AMPHTML',
    'automation',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
    'bingbot',
    'search-engine',
  ],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    'Applebot',
    'search-engine',
  ],
  ['DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)', 'DuckDuckBot', 'search-engine'],
  ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'YandexBot', 'search-engine'],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 8_1 like Mac OS X) AppleWebKit/600.1.4 (KHTML, like Gecko) Version/8.0 Mobile/12B411 Safari/600.1.4 (compatible; YandexMobileBot/3.0; +http://yandex.com/bots)',
    'YandexBot',
    'search-engine',
  ],
  [
    'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)',
    'Baiduspider',
    'search-engine',
  ],
  [
    'Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)',
    'PetalBot',
    'search-engine',
  ],
  [
    'Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)',
    'Yahoo! Slurp',
    'search-engine',
  ],
  ['Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)', 'Sogou', 'search-engine'],
  // SEO
  ['Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', 'AhrefsBot', 'seo'],
  ['Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)', 'SemrushBot', 'seo'],
  ['Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)', 'MJ12bot', 'seo'],
  ['Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)', 'DotBot', 'seo'],
  [
    'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse',
    'Chrome-Lighthouse',
    'automation',
  ],
  // Social previews
  ['Twitterbot/1.0', 'Twitterbot', 'social-preview'],
  [
    'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
    'LinkedInBot',
    'social-preview',
  ],
  ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'Slackbot', 'social-preview'],
  ['Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)', 'Discordbot', 'social-preview'],
  ['TelegramBot (like TwitterBot)', 'TelegramBot', 'social-preview'],
  ['WhatsApp/2.23.20.0 A', 'WhatsApp', 'social-preview'],
  [
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'facebookexternalhit',
    'social-preview',
  ],
  // iMessage's link previews
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
    'facebookexternalhit',
    'social-preview',
  ],
  ['Pinterest/0.2 (+https://www.pinterest.com/bot.html)', 'Pinterestbot', 'social-preview'],
  ['Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)', 'redditbot', 'social-preview'],
  ['http.rb/5.1.1 (Mastodon/4.2.1; +https://mastodon.social/)', 'Mastodon', 'social-preview'],
  // Automation
  ['curl/8.4.0', 'curl', 'automation'],
  ['Wget/1.21.4', 'Wget', 'automation'],
  ['python-requests/2.31.0', 'python-requests', 'automation'],
  ['Python-urllib/3.11', 'Python-urllib', 'automation'],
  ['Python/3.11 aiohttp/3.9.1', 'aiohttp', 'automation'],
  ['python-httpx/0.27.0', 'python-httpx', 'automation'],
  ['Go-http-client/1.1', 'Go-http-client', 'automation'],
  ['node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', 'node-fetch', 'automation'],
  ['undici', 'undici', 'automation'],
  ['node', 'node', 'automation'],
  ['axios/1.7.2', 'axios', 'automation'],
  ['okhttp/4.12.0', 'okhttp', 'automation'],
  ['Java/17.0.9', 'Java', 'automation'],
  ['Apache-HttpClient/4.5.14 (Java/17.0.9)', 'Apache-HttpClient', 'automation'],
  ['libwww-perl/6.72', 'libwww-perl', 'automation'],
  ['Scrapy/2.11.0 (+https://scrapy.org)', 'Scrapy', 'automation'],
  // HTTP clients' defaults that read like no crawler (Invoke-WebRequest's starts like a browser's)
  ['Mozilla/5.0 (Windows NT; Windows NT 10.0; en-US) WindowsPowerShell/5.1.19041.3031', 'PowerShell', 'automation'],
  ['Mozilla/5.0 (Windows NT 10.0; Microsoft Windows 10.0.19045; en-US) PowerShell/7.4.0', 'PowerShell', 'automation'],
  ['Faraday v2.7.4', 'Faraday', 'automation'],
  ['Symfony HttpClient/Curl', 'Symfony HttpClient', 'automation'],
  [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36',
    'HeadlessChrome',
    'automation',
  ],
  [
    'Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1',
    'PhantomJS',
    'automation',
  ],
  // In no catalogue, but saying what they are
  ['Mozilla/5.0 (compatible; NewAIBot/0.1; +https://newai.example/bot)', 'unknown-crawler', 'automation'],
  ['SomeFetcher/1.0', 'unknown-crawler', 'automation'],
  ['Mozilla/5.0 (compatible; Archiver; mailto:ops@example.org)', 'unknown-crawler', 'automation'],
];

export const BROWSER_USER_AGENTS: readonly [ua: string, label: string][] = [
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'Chrome, Windows',
  ],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'Chrome, macOS',
  ],
  [
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
    'Chrome, Android',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1',
    'Safari, iOS',
  ],
  [
    'Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1',
    'Safari, iPadOS',
  ],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
    'Safari, macOS',
  ],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox, Windows'],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox, Linux'],
  ['Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0', 'Firefox, Android'],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
    'Edge, Windows',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0',
    'Opera',
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
    'Samsung Internet',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
    'Chrome, iOS',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 YaBrowser/24.10.0.0 Safari/537.36',
    'Yandex Browser',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.40.98;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/5]',
    'Facebook in-app browser',
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 Instagram 344.0.0.34.101 Android (34/14; 420dpi; 1080x2400; Google/google; Pixel 8; shiba; shiba; en_US; 634108168)',
    'Instagram in-app browser',
  ],
  [
    'Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.210 Mobile Safari/537.36 [Pinterest/Android]',
    'Pinterest in-app browser',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) discord/1.0.9163 Chrome/124.0.6367.243 Electron/30.2.0 Safari/537.36',
    'Discord desktop app',
  ],
];
