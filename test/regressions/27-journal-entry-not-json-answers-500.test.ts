import { expect, it } from 'vitest'
import { createNamed, emptyFleet } from '../_servers.ts'

// One entry of the fleet's journal in Redis that was not JSON (pushed by
// hand, or by another program into the namespace) made every read of the
// journal a 500 "this is a bug in the sandbox", on every replica, until the
// key was deleted. Such an entry is now passed over: the journal answers
// with the requests it holds.

it('answers the journal with the requests it holds when Redis holds an entry that is not one', async () => {
  const { start, client } = await emptyFleet('bad-journal')
  const server = await start()
  expect((await createNamed(server.url, 'Ada')).status).toBe(201)
  await client.rPush('{bad-journal}:journal', ['not json', '{"x":1}'])
  client.destroy()

  const response = await fetch(`${server.url}/__sandbox/requests`)
  expect(response.status).toBe(200)
  const text = await response.text()
  expect(text).toContain('"createCustomer"')
  expect(text).not.toContain('not json')
})
