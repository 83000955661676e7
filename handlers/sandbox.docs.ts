// The words of the sandbox-wide surface's document entries, loaded with the document.
import type { SurfaceProse } from '../src/request/sandbox-api.ts'

/** The rule of a scenario's body that spans its fields (its `anyOf`), in words. */
export const SCENARIO_BODY_RULE =
  'At least one effect: a `status`, a `delay_ms` or `network_error: true`.'

/**
 * The summary, description and answer descriptions of each route of
 * `handlers/sandbox.ts`, by its `operationId`: only `GET /openapi.json`
 * loads them, so a page that never asks for the document does not download
 * them.
 *
 * @example
 * SANDBOX_PROSE.getHealth.summary // 'Health check'
 */
export const SANDBOX_PROSE: Readonly<Record<string, SurfaceProse>> = {
  getHealth: {
    summary: 'Health check',
    description:
      'Answers 200 while the sandbox serves and stores; 503 `degraded` after a failed write of the data file. Needs no credential.',
    answers: {
      200: 'Up.',
      503: 'Degraded: the last write of the data file failed (a server with `--data-file` only); back to 200 once a write succeeds.',
    },
  },
  getState: {
    summary: 'Inspect state',
    description:
      'Every account with its masked keys, every customer and every token (masked secrets), and the sandbox time.',
    answers: {
      200: 'Accounts, customers and tokens; secrets masked.',
      304: 'Unchanged since the `ETag` sent in `If-None-Match`; no body.',
    },
    parameters: {
      'If-None-Match':
        'An `ETag` of this answer: `304` while the state is unchanged.',
    },
  },
  reset: {
    summary: 'Reset to the seed',
    description:
      'Puts the data back to the fixtures and the seeded customers (of `seed` when given), and clears the clock, the journal and the scenarios.',
    answers: { 200: 'Back to the fixtures and the seeded data.' },
  },
  createApiKey: {
    summary: 'Mint an API key',
    description:
      'Creates an account and its `sk_test_` key; the key is shown in this answer only.',
    answers: { 201: 'A new account and its key (shown this once).' },
  },
  listRequests: {
    summary: 'Read the journal',
    description:
      'The requests the API operations answered, newest first, with masked credentials; `limit` keeps the newest N.',
    answers: { 200: 'Requests, newest first.' },
  },
  clearRequests: {
    summary: 'Clear the journal',
    description: 'Empties the request journal.',
    answers: { 204: 'Done.' },
  },
  getClock: {
    summary: 'Read the clock',
    description:
      'The sandbox time that drives `created_at`, expiry and idempotency windows, and whether it is frozen.',
    answers: { 200: 'The sandbox time.' },
  },
  setClock: {
    summary: 'Set or advance the clock',
    description:
      'Moves the sandbox clock by `advance_seconds` or to `now`; by default it stays there until moved again (`clockAfterSet: "running"` lets it run on). A move that would leave the years 0000 to 9999 is `422 out_of_range`.',
    answers: { 200: 'The new sandbox time.' },
  },
  listScenarios: {
    summary: 'List scenarios',
    description: 'The queued scenarios, oldest first.',
    answers: { 200: 'Queued scenarios.' },
  },
  queueScenario: {
    summary: 'Queue a scenario',
    description:
      'Makes the next `times` calls of `operation` fail with `status` (code `simulated_failure`), wait `delay_ms` or drop the connection.',
    answers: { 201: 'The queued scenario.' },
    body: SCENARIO_BODY_RULE,
  },
  clearScenarios: {
    summary: 'Clear scenarios',
    description:
      'Empties the scenario queue and puts the global latency back to its option.',
    answers: { 204: 'Done.' },
  },
  listSnapshots: {
    summary: 'List snapshots',
    description: 'The snapshots taken, oldest first.',
    answers: { 200: 'The snapshots taken, oldest first.' },
  },
  createSnapshot: {
    summary: 'Take a snapshot',
    description:
      'Saves the data and the clock under `name`, to restore them later; the same name replaces the earlier snapshot.',
    answers: { 201: 'The snapshot taken: data and clock.' },
  },
  restoreSnapshot: {
    summary: 'Restore a snapshot',
    description:
      'Puts back the data and the clock of the snapshot `name`; the journal and the scenarios stay as they are.',
    answers: {
      200: 'The data and clock are back; the journal and scenarios stay.',
    },
  },
  getLatency: {
    summary: 'Read the global latency',
    description:
      'The range of milliseconds every API call waits before it is answered.',
    answers: { 200: 'The latency range of every API call (0–0 for none).' },
  },
  setLatency: {
    summary: 'Set the global latency',
    description:
      'Makes every API call wait a uniformly drawn time from `min_ms` to `max_ms`.',
    answers: { 200: 'The new latency range.' },
    // JSON Schema cannot compare two fields: said in words.
    body: '`min_ms` must not exceed `max_ms`; a range that runs backwards is `422 validation_failed`.',
  },
  clearLatency: {
    summary: 'Remove the global latency',
    description: 'API calls no longer wait: 0–0.',
    answers: { 200: 'No latency: 0–0.' },
  },
  exportSession: {
    summary: 'Export the session',
    description:
      'The whole session (options, data, clock, journal, id positions) to replay it with `createSandbox({ from })` or `--from`.',
    answers: {
      200: 'Options, data, clock, journal and id positions, with every secret masked (`"secrets": "masked"`) unless `?secrets=include`: start a sandbox from a full export with createSandbox({ from }) or --from.',
    },
    parameters: {
      secrets:
        '`include` for the full secrets (on the standalone server: from this machine or with the admin token, never for a foreign Origin); `mask` (the default) masks them.',
    },
  },
  listAssumptions: {
    summary: 'Read the assumption ledger',
    description:
      'Every "not shown" item of the interface with the default the sandbox assumes, its option and its current value.',
    answers: { 200: 'Every "not shown" item of the interface.' },
  },
  getOpenApiDocument: {
    summary: 'Read this document',
    description:
      'This OpenAPI 3.1 document, generated from the schemas the handlers validate with and the options in force. Needs no credential.',
    answers: { 200: 'This OpenAPI document.' },
  },
}
