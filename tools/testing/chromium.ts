import { existsSync } from 'node:fs';

/** Where Debian's package puts it; CHROMIUM_PATH names another build. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/**
 * The Chromium the browser tests drive. Playwright's own browser download cannot reach its host
 * from these machines, so the tests use the system's (npm test installs Debian's when missing,
 * see ensure-chromium.ts). Never a skip: without a browser the tests fail and say why.
 */
export function chromiumPath(): string {
  const found = findChromium();
  if (!found)
    throw new Error(
      `No Chromium at ${chromiumCandidates().join(', ')}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  return found;
}

export function findChromium(): string | undefined {
  return chromiumCandidates().find((path) => existsSync(path));
}

export function chromiumCandidates(): string[] {
  return process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : CANDIDATES;
}

/** Headless, and quiet on a closed network: no background calls home, no QUIC, no GPU. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
