// The page the worker tests open: it starts the sandbox as an app would,
// with `?persist` turning persistence on and `?worker=URL` naming the worker
// script, and hands it to the test (or shows why it did not start).
import { startSandboxWorker } from '../../src/runtimes/browser.ts'

const params = new URLSearchParams(location.search)
const status = document.querySelector('#status')!
try {
  window.sandbox = await startSandboxWorker({
    persist: params.has('persist') ? 'worker-test' : false,
    ...(params.has('worker') && {
      serviceWorker: { url: params.get('worker')! },
    }),
  })
  status.textContent = window.sandbox.restored ? 'restored' : 'ready'
} catch (error) {
  status.textContent = `failed: ${(error as Error).message}`
}
