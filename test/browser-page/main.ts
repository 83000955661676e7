// The page the worker tests open: it starts the sandbox as an app would,
// with `?persist` turning persistence on, and hands it to the test.
import { startSandboxWorker } from '../../src/runtimes/browser.ts'

const params = new URLSearchParams(location.search)
window.sandbox = await startSandboxWorker({
  persist: params.has('persist') ? 'worker-test' : false,
})
document.querySelector('#status')!.textContent = window.sandbox.restored
  ? 'restored'
  : 'ready'
