// npm test's first step: the dashboard's browser tests need a Chromium. Playwright cannot
// download its own here, so this installs Debian's package when none is found (as root, with
// apt-get), and otherwise stops with what to do. Nothing happens when one is already there.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromiumCandidates, findChromium } from './chromium';

function ensureChromium(): void {
  if (findChromium()) return;
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && !process.env.CHROMIUM_PATH;
  if (!canInstall) {
    console.error(`The dashboard's browser tests need Chromium (looked at ${chromiumCandidates().join(', ')}).`);
    console.error(
      'Install it (Debian/Ubuntu: sudo apt-get install chromium) or set CHROMIUM_PATH, then run npm test again.',
    );
    process.exit(1);
  }
  console.log("Installing Debian's chromium for the dashboard's browser tests (apt-get install chromium)...");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env });
}

ensureChromium();
