import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEMO_PASSWORD } from '../harness/demo-data';

/** Debian's chromium (CHROMIUM_PATH overrides), with the flags this machine needs. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
];

/**
 * `describe` when chromium is installed, else `describe.skip` with one plain line on stderr, so a
 * skipped browser suite is not mistaken for a passing one. `suite` names it in that line.
 */
export function describeWithChromium(suite: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  process.stderr.write(
    `${suite}: skipped, no chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)\n`,
  );
  return describe.skip;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** A new browser context (its own cookies) on the console at `origin`. */
export async function openConsolePage(browser: Browser, origin: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  await page.goto(`${origin}/console`);
  return page;
}

/** Signs a demo user in on the console's form and waits until the agent acts for them. */
export async function signInAs(page: Page, username: string): Promise<void> {
  await page.getByTestId('login-username').fill(username);
  await page.getByTestId('login-password').fill(DEMO_PASSWORD);
  await page.getByTestId('login-submit').click();
  await page
    .getByTestId('whoami')
    .filter({ hasText: `Agent acts for ${username}` })
    .waitFor({ timeout: 15_000 });
}
