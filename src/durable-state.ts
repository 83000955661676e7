// What a durable store (the data file, Redis, localStorage) takes of the core: the state beside the data, and another copy's writes.
import { z } from 'zod'
import type { DurableExtras, StoreSource } from './model/store.ts'
import {
  SavedIdempotencyKeySchema,
  SavedScenariosSchema,
  type SandboxData,
  type SavedScenarios,
} from './model/schemas.ts'
import type { SandboxContext } from './request/context.ts'
import { markTakenFromStore } from './request/pipeline.ts'
import { INSERT_SLICE } from './model/seeding.ts'
import type { SandboxCore } from './sandbox.ts'
import {
  anchorClocks,
  checkStoredClocks,
  runOnStoredClocks,
  type StoredClocks,
} from './clock-anchors.ts'

/**
 * The state a durable store keeps so that a restart changes nothing a client
 * sees: the data (`dump()`), with the answered idempotency keys and the
 * queued scenarios beside it.
 */
export interface DurableState extends StoreSource {
  /**
   * Loads the data that the store itself wrote (a data file, what a page
   * saved), as `sandbox.load()` does but taking the records as they are:
   * a sandbox never refuses to start on its own file, even one filled
   * under higher limits or edited through `sandbox.db`; and runs a running
   * clock on by the host's time since it was stored (`host_now`).
   */
  load(input: unknown): Promise<void>
  /** Settles once no seeding is under way, even one a reset started meanwhile. */
  settled(): Promise<void>
  /**
   * Puts back the keys and scenarios that `dump()` gave, after the data
   * itself was loaded. Throws a `TypeError` naming the first thing that is
   * not in the format.
   */
  restore(input: Partial<Record<keyof DurableExtras, unknown>>): void
}

/**
 * The durable state of one sandbox's core: what a store dumps, puts back
 * after a restart, and applies of another copy's writes.
 *
 * @example
 * const durable = createDurableState(ctx, sandbox, { adopt, loadOwn, loadStateWatch, savedScenarios, dumpWithoutRecords })
 * await durable.apply({ created: { customer } })
 */
export function createDurableState(
  ctx: SandboxContext,
  sandbox: SandboxCore,
  {
    adopt,
    loadOwn,
    loadStateWatch,
    savedScenarios,
    dumpWithoutRecords,
  }: {
    /** Takes a whole state another copy stored (`adopt` of the core). */
    adopt: (input: unknown) => Promise<void>
    /** `load()` without the rules a user's data is held to (`loadOwn` of the core). */
    loadOwn: (input: unknown) => Promise<void>
    loadStateWatch: () => Promise<typeof import('./state-watch.ts')>
    /** The scenario queues and the latency, as a durable store keeps them. */
    savedScenarios: () => SavedScenarios
    /** `sandbox.dump()` with its record lists empty (of the core). */
    dumpWithoutRecords: () => SandboxData
  },
): DurableState {
  /**
   * `data` with the keys and scenarios a durable store keeps beside it, and
   * its running clocks with the host's time (`anchorClocks`).
   */
  const withExtras = (data: SandboxData): SandboxData & DurableExtras => {
    const scenarios = savedScenarios()
    const unchanged =
      scenarios.queue.length === 0 &&
      scenarios.accounts.length === 0 &&
      JSON.stringify(scenarios.latency) === JSON.stringify(ctx.options.latency)
    return {
      ...data,
      ...anchorClocks(ctx, data),
      ...(!unchanged && { scenarios }),
      idempotency_keys: ctx.idempotency.saved(ctx.clock.now().getTime()),
    }
  }
  const durable: DurableState = {
    async load(input) {
      checkStoredClocks(input)
      await loadOwn(input)
      // @note Run on once the data is in, not before: a load of many
      // records takes a while, which a running clock would lose.
      runOnStoredClocks(ctx, input as StoredClocks)
    },
    async replace(state) {
      checkStoredClocks(state)
      await adopt(state)
      runOnStoredClocks(ctx, state)
      markTakenFromStore(ctx.db)
      durable.restore({
        idempotency_keys: state.idempotency_keys,
        scenarios: state.scenarios ?? {
          latency: ctx.options.latency,
          queue: [],
          accounts: [],
        },
      })
    },
    async apply({ created, idempotencyKey, taken, added, set }) {
      // The queues are the same on every replica: the same take takes the same.
      if (taken?.account_id != null)
        ctx.accounts.takeScenario(taken.account_id, taken.operation)
      else if (taken) ctx.scenarios.take(taken.operation)
      if (created && 'customer' in created)
        await ctx.db.insertCustomer(created.customer)
      else if (created) await ctx.db.insertToken(created.token)
      // @note An account that a call beside the one that made it stored too
      // comes twice: the copy held already stays.
      if (added?.account && !ctx.db.accountById(added.account.id))
        await ctx.db.insertAccount(added.account)
      if (added?.api_key && !ctx.db.apiKeyById(added.api_key.id))
        await ctx.db.insertApiKey(added.api_key)
      if (set) (await loadStateWatch()).applyClocks(ctx, set)
      if (set?.scenarios) durable.restore({ scenarios: set.scenarios })
      if (idempotencyKey)
        durable.restore({ idempotency_keys: [idempotencyKey] })
    },
    dumpShared() {
      // @note Built without the records, which dump() would copy only to
      // drop: a compaction runs every so many writes on a replica that may
      // hold many.
      const copy = <T extends object>(records: readonly T[]): T[] =>
        records.map((record) => ({ ...record }))
      return {
        ...withExtras(dumpWithoutRecords()),
        accounts: copy(ctx.db.accounts.all()),
        api_keys: copy(ctx.db.apiKeys.all()),
      }
    },
    async insert(records) {
      for (let at = 0; at < records.length; at += INSERT_SLICE) {
        await Promise.all(
          records
            .slice(at, at + INSERT_SLICE)
            .map((created) =>
              'customer' in created
                ? ctx.db.insertCustomer(created.customer)
                : ctx.db.insertToken(created.token),
            ),
        )
      }
    },
    accountOf(credential) {
      for (const { record } of ctx.db.credentialsByHash(credential) ?? [])
        if (record.secret === credential) return record.account_id
      return undefined
    },
    holdElsewhere(count) {
      ctx.db.elsewhere = count
    },
    heldRecords: (accountId) =>
      accountId === undefined
        ? ctx.db.customers.count() + ctx.db.tokens.count()
        : ctx.db.customersOf(accountId).length +
          ctx.db.tokensOf(accountId).length,
    accountIds: () => ctx.db.accounts.all().map(({ id }) => id),
    async evict(accountId) {
      // @note Filtered in place, in one pass over each collection's own
      // array: a delete through @msw/data finds each record by a scan of
      // the collection, and one account of 50,000 customers took seconds,
      // holding the event loop. Nor is it an edit of the data.
      for (const records of [ctx.db.customers.all(), ctx.db.tokens.all()]) {
        let kept = 0
        for (const record of records)
          if (record.account_id !== accountId) records[kept++] = record
        records.length = kept
      }
      ctx.db.reindex()
    },
    dump: () => withExtras(sandbox.dump()),
    async settled() {
      let ready: Promise<void> | undefined
      while (ready !== ctx.ready) {
        ready = ctx.ready
        await ready
      }
    },
    restore({ idempotency_keys, scenarios }) {
      const parse = <T>(
        schema: z.ZodType<T>,
        name: string,
        value: unknown,
      ): T => {
        const result = schema.safeParse(value)
        if (result.success) return result.data
        const issue = result.error.issues[0]!
        throw new TypeError(
          `${[name, ...issue.path].join('.')}: ${issue.message}.`,
        )
      }
      if (idempotency_keys !== undefined) {
        ctx.idempotency.restore(
          parse(
            z.array(SavedIdempotencyKeySchema),
            'idempotency_keys',
            idempotency_keys,
          ),
        )
      }
      if (scenarios !== undefined) {
        const saved = parse(SavedScenariosSchema, 'scenarios', scenarios)
        ctx.scenarios.latency(saved.latency)
        ctx.scenarios.restore(saved.queue)
        ctx.accounts.restoreQueues(saved.accounts)
      }
    },
  }
  return durable
}
