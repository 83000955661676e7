import { createServer, mergeConfig, type InlineConfig } from 'vite'
import { expect, it } from 'vitest'
import { sandbox, type SandboxPluginOptions } from '../../src/runtimes/vite.ts'

// Two copies of the plugin (a shared config merged into the app's) made
// every fetch of the page wait forever, with nothing said; the sandbox's
// options given beside `start` (`sandbox({ seed: 7 })`) were dropped without
// a word; and bad `start` options, or functions (which JSON drops), were
// found only in the browser's console, after the page's requests had gone to
// the network.

const example = new URL('../../examples/vite-app/', import.meta.url).pathname

async function serve(config: InlineConfig): Promise<void> {
  const server = await createServer({
    configFile: false,
    root: example,
    logLevel: 'silent',
    server: { host: '127.0.0.1', port: 0 },
    ...config,
  })
  await server.close()
}

it('refuses a second copy of the plugin, as a merged config makes it', async () => {
  const shared = { plugins: [sandbox()] }
  await expect(
    serve(mergeConfig(shared, { plugins: [sandbox({ start: { seed: 7 } })] })),
  ).rejects.toThrow(
    'sandbox() from customer-token-sandbox/vite is in the Vite config 2 times; keep one',
  )
})

it.each<[string, unknown, string]>([
  [
    "the sandbox's options beside start",
    { seed: 7 },
    'Failed to set up sandbox() from customer-token-sandbox/vite: unknown option "seed". See SandboxPluginOptions for the options there are. The plugin takes start and demo; the sandbox\'s own options go under start, as in sandbox({ start: { seed: … } }).',
  ],
  [
    'options that are not an object',
    'yes',
    'its options must be an object such as { start: { seed: 7 } }, not "yes". See SandboxPluginOptions',
  ],
  [
    'a demo that is not a boolean',
    { demo: 'yes' },
    'option "demo" must be true or false, not "yes". See SandboxPluginOptions for its type and default.',
  ],
  [
    'a start that is not an object',
    { start: true },
    'option "start" must be false or an object of startSandboxWorker() options, not true.',
  ],
])('refuses %s when the plugin is made', (_, options, message) => {
  expect(() => sandbox(options as SandboxPluginOptions)).toThrow(message)
})

it.each<[string, Record<string, unknown>, string]>([
  [
    'a sandbox option of the wrong type',
    { seed: 'x' },
    'option "start.seed" must be a whole number from 0 to 4294967295, not "x". See StartSandboxWorkerOptions for its type and default.',
  ],
  [
    'an unknown sandbox option',
    { bogus: 1 },
    'unknown option "start.bogus". See StartSandboxWorkerOptions for the options there are.',
  ],
  [
    'inconsistent bounds',
    { expiresIn: { min: 100, max: 10 } },
    'in "start", option "expiresIn.min" (100) is above "expiresIn.max" (10)',
  ],
  [
    'a function, which cannot reach the page',
    { onRequest: () => {} },
    'option "start.onRequest" is a function, which cannot be passed to the page; use sandbox({ start: false }) and call startSandboxWorker({ onRequest }) in the page\'s own code',
  ],
  [
    'a callback option that is not even a function',
    { onSeedProgress: 'bar' },
    'option "start.onSeedProgress" takes a function, which cannot be passed to the page',
  ],
  [
    'the worker script URL, which the plugin sets',
    { serviceWorker: { url: '/x.js' } },
    'option "start.serviceWorker" is set by the plugin',
  ],
  [
    'a bad persist',
    { persist: 1 },
    'option "start.persist" must be true, false or a storage key, not 1.',
  ],
  [
    'a function where a value belongs',
    { persist: () => 'key' },
    'option "start.persist" must be true, false or a storage key, not a function.',
  ],
  [
    'a bad quiet',
    { quiet: 'no' },
    'option "start.quiet" must be true or false, not "no".',
  ],
  [
    'a bad onUnhandledRequest',
    { onUnhandledRequest: 'ignore' },
    'option "start.onUnhandledRequest" must be one of "bypass", "warn", "error", not "ignore".',
  ],
])(
  'stops `vite` on %s in start, before any page loads',
  async (_, start, message) => {
    await expect(
      serve({ plugins: [sandbox({ start: start as never })] }),
    ).rejects.toThrow(message)
  },
)

it('still starts with good options', async () => {
  await expect(
    serve({
      plugins: [
        sandbox({
          start: {
            seed: 7,
            persist: 'app',
            quiet: false,
            onUnhandledRequest: 'warn',
          },
        }),
      ],
    }),
  ).resolves.toBeUndefined()
})
