// The words of the account-scoped controls' document entries, loaded with the document.
import type { SurfaceProse } from '../src/request/sandbox-api.ts'
import { SCENARIO_BODY_RULE } from './sandbox.docs.ts'

/**
 * The summary, description and answer descriptions of each route of
 * `handlers/account.ts`, by its `operationId`, loaded only with the
 * document as `SANDBOX_PROSE` is.
 *
 * @example
 * ACCOUNT_PROSE.setAccountClock.summary // 'Set or advance the account clock'
 */
export const ACCOUNT_PROSE: Readonly<Record<string, SurfaceProse>> = {
  getAccountClock: {
    summary: 'Read the account clock',
    description:
      "The clock of the account whose API key is the Bearer credential: its own (`own: true`) once set or advanced, the sandbox clock otherwise. It drives that account's `created_at`, token expiry and journal times; idempotency and rate-limit windows stay on the sandbox clock.",
    answers: { 200: "The account's time." },
  },
  setAccountClock: {
    summary: 'Set or advance the account clock',
    description:
      'Gives the account a clock of its own, starting from the sandbox time, and moves it; other accounts and the sandbox clock stay where they are (like a Stripe test clock).',
    answers: { 200: "The account's new time." },
  },
  clearAccountClock: {
    summary: 'Drop the account clock',
    description: 'The account follows the sandbox clock again.',
    answers: { 200: "The account's time." },
  },
  listAccountScenarios: {
    summary: 'List the account scenarios',
    description: "The scenarios queued for the account's own calls.",
    answers: { 200: 'Queued scenarios.' },
  },
  queueAccountScenario: {
    summary: 'Queue an account scenario',
    description:
      "Fails or delays the account's next matching calls; only requests authenticated as the account consume it, before the sandbox-wide queue. `limits.scenarios` bounds each account's queue and all of them together.",
    answers: { 201: 'The queued scenario.' },
    body: SCENARIO_BODY_RULE,
  },
  clearAccountScenarios: {
    summary: 'Clear the account scenarios',
    description: "Empties the account's queue.",
    answers: { 204: 'Done.' },
  },
  listAccountRequests: {
    summary: 'Read the account journal',
    description:
      "The journal's entries of requests authenticated as the account, newest first (a view of the journal, so `journalLimit` bounds it).",
    answers: { 200: "The account's requests, newest first." },
  },
  clearAccountRequests: {
    summary: 'Clear the account journal',
    description:
      "Hides the account's entries so far from this view; the sandbox journal keeps them.",
    answers: { 204: 'Done.' },
  },
}
