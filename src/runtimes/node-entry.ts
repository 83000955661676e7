// The `./node` export: the standalone server, and msw's setupServer with the
// sandbox's handlers. Kept apart from node.ts so that what starts a server
// (the Playwright fixture) never loads msw.
export * from './node.ts'
export { setupSandboxServer } from './setup-server.ts'
export type {
  SandboxMswServer,
  SetupSandboxServerOptions,
  UnhandledStrategy,
} from './setup-server.ts'
export { readSessionFile } from '../model/session-file.ts'
