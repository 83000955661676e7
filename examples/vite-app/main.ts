// The app's own code: it calls the API as it would in production. In dev,
// the sandbox answers in the browser; in a build, the real API does (or, in
// a demo build, the sandbox again).
const API_KEY = 'sk_test_DemoKeyForTheSandbox0001'

// As many apps do, it starts once the document is ready, and its first call
// is made at once: the plugin keeps that order and holds the call until the
// sandbox answers.
document.addEventListener('DOMContentLoaded', async () => {
  const form = document.querySelector<HTMLFormElement>('#create')!
  const result = document.querySelector<HTMLOutputElement>('#result')!
  const status = document.querySelector<HTMLOutputElement>('#status')!
  const button = form.querySelector('button')!

  // A token for this session, with just the scope the form needs.
  const minted = await fetch('/v2/tokens', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ scopes: ['customers:write'], expires_in: 3600 }),
  })
  if (minted.status !== 201) {
    status.textContent = `Could not get a token: ${minted.status}`
    return
  }
  const { token } = (await minted.json()) as { token: string }
  status.textContent = 'Signed in with a customers:write token.'

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const fields = new FormData(form)
    const response = await fetch('/v1/customers', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        name: fields.get('name'),
        email: fields.get('email'),
      }),
    })
    result.textContent = `${response.status} ${await response.text()}`
  })
  button.disabled = false
})
