import { describe, expect, it } from 'vitest'
import { DEMO_KEY_ONE, DEMO_KEY_TWO } from '../src/fixtures.ts'
import { send, targets, type Client, useClients } from './_targets.ts'

const ACCOUNT_ONE = 'acct_DemoAccount001'
const ACCOUNT_TWO = 'acct_DemoAccount002'
const CUSTOMER_ID = /^cus_[0-9A-Za-z]{14}$/
const MIB = 1_048_576
const ada = { name: 'Ada Lovelace', email: 'ada@example.com' }

/** An address of `length` characters that every practical syntax accepts. */
const emailOfLength = (length: number): string => {
  const local = 'a'.repeat(64)
  let domain = 'com'
  while (local.length + 1 + domain.length < length) {
    const room = length - local.length - 1 - domain.length - 1
    domain = `${'b'.repeat(Math.min(63, room))}.${domain}`
  }
  return `${local}@${domain}`
}

/** Sends raw bytes, so that no Content-Type is added by fetch or `send`. */
const postBytes = async (
  client: Client,
  path: string,
  text: string,
  headers: Record<string, string> = {},
) => {
  const response = await client.fetch(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEMO_KEY_ONE}`, ...headers },
    body: new TextEncoder().encode(text),
  })
  return { status: response.status, body: await response.json() }
}

for (const target of targets) {
  describe(target.name, () => {
    const start = useClients(target)
    const mint = async (
      client: Client,
      scopes: string[],
      key = DEMO_KEY_ONE,
    ): Promise<string> => {
      const { status, body } = await send(client, 'POST', '/v2/tokens', {
        key,
        body: { scopes },
      })
      expect(status).toBe(201)
      return body.token as string
    }
    const expectFieldError = (
      result: { status: number; body: any },
      field: string,
    ): void => {
      expect(result.status).toBe(422)
      expect(result.body.code).toBe('validation_failed')
      expect(result.body.errors.map((e: { field: string }) => e.field)).toEqual(
        [field],
      )
    }

    it('returns 201 with exactly id, name and email when an API key creates a customer', async () => {
      const client = await start()
      const { status, body, headers } = await send(
        client,
        'POST',
        '/v1/customers',
        { body: ada },
      )
      expect(status).toBe(201)
      expect(headers.get('content-type')).toMatch(/^application\/json/)
      expect(Object.keys(body).toSorted()).toEqual(['email', 'id', 'name'])
      expect(body).toEqual({ id: body.id, ...ada })
      expect(body.id).toMatch(CUSTOMER_ID)
    })

    it('gives every new customer a distinct id of cus_ and 14 base62 characters', async () => {
      const client = await start()
      const seeded = client.sandbox.customers.list().map((c) => c.id)
      const ids = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const { body } = await send(client, 'POST', '/v1/customers', {
          body: { name: `Customer ${i}`, email: `c${i}@example.com` },
        })
        expect(body.id).toMatch(CUSTOMER_ID)
        ids.add(body.id)
      }
      expect(ids.size).toBe(20)
      for (const id of seeded) expect(ids.has(id)).toBe(false)
    })

    it('echoes name and email exactly as sent, keeping whitespace around the name and the case of the email', async () => {
      const client = await start()
      const sent = {
        name: '  Ada  Lovelace \t',
        email: 'Ada.Lovelace@Example.COM',
      }
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: sent,
      })
      expect(status).toBe(201)
      expect(body.name).toBe(sent.name)
      expect(body.email).toBe(sent.email)
      const record = client.sandbox.customers.get(body.id)
      expect(record?.name).toBe(sent.name)
      expect(record?.email).toBe(sent.email)
    })

    it("stores the new customer in the caller's account and in no other", async () => {
      const client = await start()
      const before = {
        one: client.sandbox.customers.count({ accountId: ACCOUNT_ONE }),
        two: client.sandbox.customers.count({ accountId: ACCOUNT_TWO }),
      }
      const { body } = await send(client, 'POST', '/v1/customers', {
        body: ada,
      })
      const one = client.sandbox.customers.list({ accountId: ACCOUNT_ONE })
      const two = client.sandbox.customers.list({ accountId: ACCOUNT_TWO })
      expect(one.map((c) => c.id)).toContain(body.id)
      expect(two.map((c) => c.id)).not.toContain(body.id)
      expect(one).toHaveLength(before.one + 1)
      expect(two).toHaveLength(before.two)
      expect(client.sandbox.customers.get(body.id)).toMatchObject({
        id: body.id,
        account_id: ACCOUNT_ONE,
        ...ada,
      })
    })

    it("stores a customer created with account two's key in account two", async () => {
      const client = await start()
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        key: DEMO_KEY_TWO,
        body: ada,
      })
      expect(status).toBe(201)
      expect(client.sandbox.customers.get(body.id)?.account_id).toBe(
        ACCOUNT_TWO,
      )
      expect(
        client.sandbox.customers
          .list({ accountId: ACCOUNT_ONE })
          .map((c) => c.id),
      ).not.toContain(body.id)
    })

    it('returns 422 naming name when name is missing', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { email: ada.email },
      })
      expectFieldError(result, 'name')
      expect(result.body.errors[0].code).toBe('required')
    })

    it('returns 422 naming email when email is missing', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { name: ada.name },
      })
      expectFieldError(result, 'email')
      expect(result.body.errors[0].code).toBe('required')
    })

    it('returns 422 naming both fields when the body is an empty object, and stores nothing', async () => {
      const client = await start()
      const count = client.sandbox.customers.count()
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: {},
      })
      expect(status).toBe(422)
      expect(
        body.errors.map((e: { field: string }) => e.field).toSorted(),
      ).toEqual(['email', 'name'])
      expect(client.sandbox.customers.count()).toBe(count)
    })

    for (const value of [null, 42, true, ['Ada'], { first: 'Ada' }]) {
      it(`returns 422 naming name when name is ${JSON.stringify(value)}`, async () => {
        const client = await start()
        expectFieldError(
          await send(client, 'POST', '/v1/customers', {
            body: { ...ada, name: value },
          }),
          'name',
        )
      })
      it(`returns 422 naming email when email is ${JSON.stringify(value)}`, async () => {
        const client = await start()
        expectFieldError(
          await send(client, 'POST', '/v1/customers', {
            body: { ...ada, email: value },
          }),
          'email',
        )
      })
    }

    it('accepts a name of 200 characters', async () => {
      const client = await start()
      const name = 'n'.repeat(200)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, name },
      })
      expect(status).toBe(201)
      expect(body.name).toBe(name)
    })

    it('returns 422 naming name when the name has 201 characters', async () => {
      const client = await start()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, name: 'n'.repeat(201) },
      })
      expectFieldError(result, 'name')
      expect(result.body.errors[0].message).toMatch(/200/)
    })

    it('returns 422 naming name when 200 characters are surrounded by whitespace, since the length counts as sent', async () => {
      const client = await start()
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { ...ada, name: `   ${'n'.repeat(200)}\t\n ` },
        }),
        'name',
      )
    })

    it('returns 422 naming name when the name is only whitespace', async () => {
      const client = await start()
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { ...ada, name: ' \t\n  ' },
        }),
        'name',
      )
    })

    it('returns 422 naming name when the name is empty', async () => {
      const client = await start()
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { ...ada, name: '' },
        }),
        'name',
      )
    })

    it('counts an emoji as one character: 200 are accepted and echoed', async () => {
      const client = await start()
      const name = '😀'.repeat(200)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, name },
      })
      expect(status).toBe(201)
      expect(body.name).toBe(name)
    })

    it('counts an emoji as one character: 201 are too many', async () => {
      const client = await start()
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { ...ada, name: '😀'.repeat(201) },
        }),
        'name',
      )
    })

    it('accepts a single visible character surrounded by spaces', async () => {
      const client = await start()
      const { status } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, name: ' A ' },
      })
      expect(status).toBe(201)
    })

    for (const email of [
      'ada',
      'ada@',
      '@example.com',
      'ada@example',
      'ada example@example.com',
      'ada@@example.com',
      'ada@example..com',
      ' ada@example.com',
      '',
    ]) {
      it(`returns 422 naming email when email is ${JSON.stringify(email)}`, async () => {
        const client = await start()
        const count = client.sandbox.customers.count()
        const result = await send(client, 'POST', '/v1/customers', {
          body: { ...ada, email },
        })
        expectFieldError(result, 'email')
        expect(client.sandbox.customers.count()).toBe(count)
      })
    }

    it('accepts an email of 254 characters', async () => {
      const client = await start()
      const email = emailOfLength(254)
      expect(email).toHaveLength(254)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, email },
      })
      expect(status).toBe(201)
      expect(body.email).toBe(email)
    })

    it('returns 422 naming email when the email has 255 characters', async () => {
      const client = await start()
      const email = emailOfLength(255)
      expect(email).toHaveLength(255)
      const result = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, email },
      })
      expectFieldError(result, 'email')
      expect(result.body.errors[0].message).toMatch(/254/)
    })

    it('returns 422 naming an unknown field', async () => {
      const client = await start()
      const count = client.sandbox.customers.count()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, phone: '+44 20 7946 0000' },
      })
      expectFieldError(result, 'phone')
      expect(result.body.errors[0].code).toBe('unknown_field')
      expect(client.sandbox.customers.count()).toBe(count)
    })

    it('returns 422 naming id when the request sends an id, and no record takes that id', async () => {
      const client = await start()
      const sentId = 'cus_ChosenByCaller01'
      const count = client.sandbox.customers.count()
      const result = await send(client, 'POST', '/v1/customers', {
        body: { id: sentId, ...ada },
      })
      expectFieldError(result, 'id')
      expect(client.sandbox.customers.get(sentId)).toBeUndefined()
      expect(client.sandbox.customers.count()).toBe(count)
    })

    it('names every unknown field at once', async () => {
      const client = await start()
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, id: 'cus_x', phone: '1', address: {} },
      })
      expect(status).toBe(422)
      expect(
        body.errors.map((e: { field: string }) => e.field).toSorted(),
      ).toEqual(['address', 'id', 'phone'])
    })

    it('ignores unknown fields and a sent id with unknownFields "ignore"', async () => {
      const client = await start({ unknownFields: 'ignore' })
      const sentId = 'cus_ChosenByCaller01'
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { id: sentId, ...ada, phone: '1' },
      })
      expect(status).toBe(201)
      expect(Object.keys(body).toSorted()).toEqual(['email', 'id', 'name'])
      expect(body.id).not.toBe(sentId)
      expect(body.id).toMatch(CUSTOMER_ID)
      expect(client.sandbox.customers.get(sentId)).toBeUndefined()
      expect(client.sandbox.customers.get(body.id)).not.toHaveProperty('phone')
    })

    it('returns 415 when the request has no Content-Type', async () => {
      const client = await start()
      const { status, body } = await postBytes(
        client,
        '/v1/customers',
        JSON.stringify(ada),
      )
      expect(status).toBe(415)
      expect(body.code).toBe('unsupported_media_type')
    })

    for (const type of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'application/xml',
    ]) {
      it(`returns 415 when the Content-Type is ${type}`, async () => {
        const client = await start()
        const count = client.sandbox.customers.count()
        const { status, body } = await send(client, 'POST', '/v1/customers', {
          body: ada,
          headers: { 'content-type': type },
        })
        expect(status).toBe(415)
        expect(body.code).toBe('unsupported_media_type')
        expect(client.sandbox.customers.count()).toBe(count)
      })
    }

    for (const type of [
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'Application/Json;Charset=UTF-8',
    ]) {
      it(`returns 201 when the Content-Type is ${type}`, async () => {
        const client = await start()
        const { status } = await send(client, 'POST', '/v1/customers', {
          body: ada,
          headers: { 'content-type': type },
        })
        expect(status).toBe(201)
      })
    }

    it('returns 413 when the body is over 1 MiB', async () => {
      const client = await start()
      const json = JSON.stringify(ada)
      const body = json.slice(0, -1) + ' '.repeat(MIB + 1 - json.length) + '}'
      expect(new TextEncoder().encode(body).byteLength).toBe(MIB + 1)
      const result = await send(client, 'POST', '/v1/customers', { body })
      expect(result.status).toBe(413)
      expect(result.body.code).toBe('payload_too_large')
    })

    it('accepts a body of exactly 1 MiB', async () => {
      const client = await start()
      const json = JSON.stringify(ada)
      const body = json.slice(0, -1) + ' '.repeat(MIB - json.length) + '}'
      expect(new TextEncoder().encode(body).byteLength).toBe(MIB)
      const { status } = await send(client, 'POST', '/v1/customers', { body })
      expect(status).toBe(201)
    })

    for (const [label, text] of [
      ['invalid JSON', '{"name": "Ada", "email": '],
      ['a JSON array', JSON.stringify([ada])],
      ['JSON null', 'null'],
      ['an empty body', ''],
      ['a JSON string', '"Ada"'],
      ['a JSON number', '42'],
      ['JSON with a trailing comma', '{"name":"Ada","email":"a@b.co",}'],
    ] as const) {
      it(`returns 400 invalid_json when the body is ${label}`, async () => {
        const client = await start()
        const count = client.sandbox.customers.count()
        const { status, body } = await send(client, 'POST', '/v1/customers', {
          body: text,
          headers: { 'content-type': 'application/json' },
        })
        expect(status).toBe(400)
        expect(body.code).toBe('invalid_json')
        expect(client.sandbox.customers.count()).toBe(count)
      })
    }

    it('allows two customers with one email by default', async () => {
      const client = await start()
      const first = await send(client, 'POST', '/v1/customers', { body: ada })
      const second = await send(client, 'POST', '/v1/customers', { body: ada })
      expect([first.status, second.status]).toEqual([201, 201])
      expect(second.body.id).not.toBe(first.body.id)
    })

    it('returns 409 email_taken with uniqueEmail when the account already has the email in another case', async () => {
      const client = await start({ uniqueEmail: true })
      const first = await send(client, 'POST', '/v1/customers', { body: ada })
      expect(first.status).toBe(201)
      const count = client.sandbox.customers.count()
      const second = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Another Ada', email: 'ADA@Example.com' },
      })
      expect(second.status).toBe(409)
      expect(second.body.code).toBe('email_taken')
      expect(client.sandbox.customers.count()).toBe(count)
    })

    it("returns 409 email_taken with uniqueEmail for the email of one of the account's seeded customers", async () => {
      const client = await start({ uniqueEmail: true })
      const seeded = client.sandbox.customers
        .list({ accountId: ACCOUNT_ONE })
        .find((c) => c.email !== undefined)!
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { name: 'Someone', email: seeded.email!.toUpperCase() },
      })
      expect(status).toBe(409)
      expect(body.code).toBe('email_taken')
    })

    it('lets account two use an email that account one has, with uniqueEmail', async () => {
      const client = await start({ uniqueEmail: true })
      const one = await send(client, 'POST', '/v1/customers', { body: ada })
      const two = await send(client, 'POST', '/v1/customers', {
        key: DEMO_KEY_TWO,
        body: ada,
      })
      expect([one.status, two.status]).toEqual([201, 201])
      expect(client.sandbox.customers.get(two.body.id)?.account_id).toBe(
        ACCOUNT_TWO,
      )
    })

    it('accepts a customer without a name when requiredFields lists only email', async () => {
      const client = await start({ requiredFields: ['email'] })
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: { email: ada.email },
      })
      expect(status).toBe(201)
      expect(body).toEqual({ id: body.id, email: ada.email })
      expect(body.id).toMatch(CUSTOMER_ID)
    })

    it('still returns 422 naming email when requiredFields lists only email and it is missing', async () => {
      const client = await start({ requiredFields: ['email'] })
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { name: ada.name },
        }),
        'email',
      )
    })

    it('still validates an optional name that is sent', async () => {
      const client = await start({ requiredFields: ['email'] })
      expectFieldError(
        await send(client, 'POST', '/v1/customers', {
          body: { name: '   ', email: ada.email },
        }),
        'name',
      )
    })

    it('accepts an empty object when requiredFields is empty', async () => {
      const client = await start({ requiredFields: [] })
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        body: {},
      })
      expect(status).toBe(201)
      expect(Object.keys(body)).toEqual(['id'])
    })

    it('enforces the nameLength option and names its bounds', async () => {
      const client = await start({ nameLength: { min: 3, max: 5 } })
      const statusOf = async (name: string) =>
        (
          await send(client, 'POST', '/v1/customers', {
            body: { ...ada, name },
          })
        ).status
      expect(await statusOf('Ad')).toBe(422)
      expect(await statusOf(' Ada ')).toBe(201)
      expect(await statusOf('Adaaa')).toBe(201)
      const tooLong = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, name: 'Adaaaa' },
      })
      expectFieldError(tooLong, 'name')
      expect(tooLong.body.errors[0].message).toMatch(/\b3\b.*\b5\b/)
    })

    it('enforces the emailMaxLength option', async () => {
      const client = await start({ emailMaxLength: 20 })
      const ok = 'a'.repeat(8) + '@example.com'
      expect(ok).toHaveLength(20)
      const { status } = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, email: ok },
      })
      expect(status).toBe(201)
      const result = await send(client, 'POST', '/v1/customers', {
        body: { ...ada, email: `a${ok}` },
      })
      expectFieldError(result, 'email')
      expect(result.body.errors[0].message).toMatch(/20/)
    })

    it('returns 201 when a token carrying customers:write creates a customer, stored in the account that minted it', async () => {
      const client = await start()
      const token = await mint(client, ['customers:write'], DEMO_KEY_TWO)
      const { status, body } = await send(client, 'POST', '/v1/customers', {
        key: token,
        body: ada,
      })
      expect(status).toBe(201)
      expect(body).toEqual({ id: body.id, ...ada })
      expect(client.sandbox.customers.get(body.id)?.account_id).toBe(
        ACCOUNT_TWO,
      )
    })

    it('returns 401 when a token creates a customer with v1AcceptsTokens off', async () => {
      const client = await start({ v1AcceptsTokens: false })
      const token = await mint(client, ['customers:write'])
      const count = client.sandbox.customers.count()
      const { status, body, headers } = await send(
        client,
        'POST',
        '/v1/customers',
        { key: token, body: ada },
      )
      expect(status).toBe(401)
      expect(body.code).toBe('invalid_credentials')
      expect(headers.get('www-authenticate')).toBe(
        'Bearer realm="sandbox", error="invalid_token"',
      )
      expect(client.sandbox.customers.count()).toBe(count)
    })

    it('still returns 201 for an API key with v1AcceptsTokens off', async () => {
      const client = await start({ v1AcceptsTokens: false })
      const { status } = await send(client, 'POST', '/v1/customers', {
        body: ada,
      })
      expect(status).toBe(201)
    })

    it('replays the first answer and creates one customer when an Idempotency-Key is sent twice with one body', async () => {
      const client = await start()
      const count = client.sandbox.customers.count()
      const headers = { 'idempotency-key': 'create-ada-1' }
      const first = await send(client, 'POST', '/v1/customers', {
        body: ada,
        headers,
      })
      const second = await send(client, 'POST', '/v1/customers', {
        body: ada,
        headers,
      })
      expect(first.status).toBe(201)
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(second.headers.get('idempotent-replayed')).toBe('true')
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      expect(client.sandbox.customers.count()).toBe(count + 1)
    })
  })
}
