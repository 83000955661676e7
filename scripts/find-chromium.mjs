#!/usr/bin/env node
// Finds a Chromium for the browser tests: CHROMIUM_PATH or CHROME_PATH,
// then Playwright's own download, then the system's. As root with none
// found, installs Debian's `chromium` with apt-get (a test tool's own
// browser download cannot work without the wider network); otherwise it
// fails with one line saying what to install.
// `node scripts/find-chromium.mjs` prints the path it settles on; `npm run
// test:browser` runs it before anything else.
import { existsSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { aptInstall, canAptInstall } from './_apt.mjs'

/** Where Debian, Ubuntu and Google's packages put the browser. */
export const SYSTEM_CHROMIUM = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
]

/** The flags the tests launch it with: no sandbox (root in containers), nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
]

async function playwrightChromium() {
  try {
    const { chromium } = await import('playwright-core')
    const path = chromium.executablePath()
    return path && existsSync(path) ? path : undefined
  } catch {
    return undefined
  }
}

/**
 * The path of a Chromium to launch; installs Debian's `chromium` when
 * `install` is true and none is found.
 *
 * @example
 * const executablePath = await findChromium({ install: false })
 * @see findRedisServer in ./find-redis.mjs, the same for the Redis tests
 */
export async function findChromium({
  env = process.env,
  install = canAptInstall(),
  log = (message) => process.stderr.write(`${message}\n`),
} = {}) {
  for (const name of ['CHROMIUM_PATH', 'CHROME_PATH']) {
    const path = env[name]
    if (!path) continue
    if (existsSync(path)) return path
    throw new Error(`${name} is ${path}, and there is no file there.`)
  }
  const found =
    (await playwrightChromium()) ?? SYSTEM_CHROMIUM.find((p) => existsSync(p))
  if (found) return found
  if (install) {
    log("No Chromium found: installing Debian's chromium with apt-get.")
    // @note With its recommended packages, as it was always installed: the
    // browser tests have never run on a Chromium without them.
    aptInstall('chromium', { recommends: true })
    const installed = SYSTEM_CHROMIUM.find((p) => existsSync(p))
    if (installed) return installed
  }
  throw new Error(
    'No Chromium found for the browser tests: install one (Debian, as root: apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary.',
  )
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    process.stdout.write(`${await findChromium()}\n`)
  } catch (error) {
    process.stderr.write(`find-chromium: ${error.message}\n`)
    process.exitCode = 1
  }
}
