// Runs once: every server here names its own store.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../../fixtures/demo-keys.ts'
import { startRedisCluster } from '../_redis.ts'
import { postCustomer, postJson, startCli, tempFolder } from '../_servers.ts'

// On a Redis Cluster, a replica busy applying what it had read (loading an
// account, say) when Redis refused its next read of the log (TRYAGAIN,
// while a resharding moved the sandbox's slot) exited: the refusal had no
// handler until the work before it was done, and Node ends a process on
// such a rejection, and calls to it then failed to connect. The
// refused read is now the request's 503 with Retry-After, and the replica
// goes on serving.

it('keeps every replica serving, each call answered 201 or 503, while a resharding moves the slot of the sandbox under load', async () => {
  const cluster = await startRedisCluster(3)
  const folder = await tempFolder('cts-reshard-')
  const replicas = []
  for (const [at, node] of cluster.nodes.entries()) {
    // @note Room for one record: every call of the other account loads it
    // again, so that a replica is often busy applying when a read fails.
    const config = join(folder, `replica-${at}.json`)
    await writeFile(
      config,
      JSON.stringify({
        store: { url: node.url, namespace: 'moving', cacheRecords: 1 },
      }),
    )
    replicas.push(
      await startCli(['--port', '0', '--quiet', '--config', config]),
    )
  }
  const statuses = new Set<number>()
  const moving = new AbortController()
  const load = async (url: string, key: string) => {
    for (let n = 0; !moving.signal.aborted; n++) {
      const answers = await Promise.all([
        postCustomer(
          url,
          { name: `Ada${n}`, email: `ada${n}@example.com` },
          { headers: { authorization: `Bearer ${key}` } },
        ),
        postJson(url, '/__sandbox/account/clock', { advance_seconds: 1 }, key),
      ]).catch(() => [{ status: 0 }])
      for (const answer of answers) statuses.add(answer.status)
    }
  }
  const loads = replicas.flatMap(({ url }) =>
    [DEMO_KEY_ONE, DEMO_KEY_TWO].map((key) => load(url, key)),
  )
  // @note Each move a few milliseconds of TRYAGAIN: many of them, with
  // calls answered between, to meet a replica busy applying.
  for (let move = 0; move < 24; move++) {
    await cluster.moveSlotOf('{moving}')
    await new Promise((done) => setTimeout(done, 20))
  }
  moving.abort()
  await Promise.all(loads)
  for (const replica of replicas) {
    expect(replica.child.exitCode, replica.stderr()).toBeNull()
    expect(replica.stderr()).not.toContain('TRYAGAIN')
    const health = await fetch(`${replica.url}/__sandbox/health`)
    expect(health.status).toBe(200)
  }
  // Made (moved), or refused with 503; never unanswered (0).
  expect([...statuses].filter((s) => ![200, 201, 503].includes(s))).toEqual([])
}, 120_000)
