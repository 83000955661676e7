// The page the worker tests open: it starts the sandbox as an app would,
// with `?persist` turning persistence on, `?worker=URL` naming the worker
// script and `?twice` starting it twice, and hands it to the test (or shows why it did not start).
import { startSandboxWorker } from '../../src/runtimes/browser.ts'

const params = new URLSearchParams(location.search)
const status = document.querySelector('#status')!
const options = {
  persist: params.has('persist') ? 'worker-test' : false,
  ...(params.has('worker') && {
    serviceWorker: { url: params.get('worker')! },
  }),
}
try {
  if (params.has('twice')) {
    // As React's StrictMode runs an effect: a second start before the first
    // has settled (`?twice=together`), or after it (`?twice`).
    const first = startSandboxWorker(options)
    if (params.get('twice') !== 'together') await first
    const second = startSandboxWorker(options)
    window.first = await first
    window.sandbox = await second
  } else {
    window.sandbox = await startSandboxWorker(options)
  }
  status.textContent = window.sandbox.restored ? 'restored' : 'ready'
} catch (error) {
  status.textContent = `failed: ${(error as Error).message}`
}
