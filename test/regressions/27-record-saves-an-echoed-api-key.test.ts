import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it, onTestFinished } from 'vitest'
import { main } from '../../src/cli/cli.ts'
import { captureOutput, tempFolder } from '../_servers.ts'

// record masked the Authorization header it saved, but a service that echoed
// the key back, in an error's body or in WWW-Authenticate, had it written to
// the session file in full.

const KEY = 'sk_live_TheProductionKeyOfAcme42'

it('masks the API key wherever the answer echoes it', async () => {
  const service = createServer((req, res) => {
    const key = req.headers.authorization?.split(' ')[1]
    req.resume()
    req.on('end', () => {
      res.writeHead(401, {
        'content-type': 'application/problem+json',
        'www-authenticate': `Bearer error="invalid_token", error_description="unknown key ${key}"`,
      })
      res.end(JSON.stringify({ title: 'Unauthorized', detail: `${key}?` }))
    })
  })
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve))
  onTestFinished(
    () => new Promise<void>((resolve) => service.close(() => resolve())),
  )
  const target = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
  const file = join(await tempFolder('cts-echoed-key-'), 'session.jsonl')
  const { recorder } = await main({
    args: ['record', '--target', target, '--port', '0', '--out', file],
    stdout: captureOutput().stream,
    stderr: captureOutput().stream,
    env: {},
  })
  const answer = await fetch(`${recorder!.url}/v1/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'x-echo': KEY },
    body: '{}',
  })
  // The client still gets the answer as the service sent it.
  expect(await answer.json()).toEqual({
    title: 'Unauthorized',
    detail: `${KEY}?`,
  })
  await recorder!.close()
  const text = await readFile(file, 'utf8')
  expect(text).toContain('Unauthorized')
  expect(text).toContain('unknown key …me42')
  expect(text).not.toContain(KEY)
})
