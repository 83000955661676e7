import { build } from 'vite'
import type { TestProject } from 'vitest/node'
import { findChromium } from '../scripts/find-chromium.mjs'
import buildPackage from './_global-setup.ts'

/**
 * Finds Chromium, then builds the package (the example app imports it by
 * name) and the playground (the server serves dist/playground).
 */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('chromiumPath', await findChromium())
  await buildPackage(project)
  await build({
    configFile: new URL('../playground/vite.config.ts', import.meta.url)
      .pathname,
    logLevel: 'error',
  })
}

declare module 'vitest' {
  export interface ProvidedContext {
    chromiumPath: string
  }
}
