// The app's own code: it calls the API as it would in production. In dev,
// the sandbox answers in the browser; in a build, the real API does.
const API_KEY = 'sk_test_DemoKeyForTheSandbox0001'

const form = document.querySelector<HTMLFormElement>('#create')!
const result = document.querySelector<HTMLOutputElement>('#result')!
const button = form.querySelector('button')!

form.addEventListener('submit', async (event) => {
  event.preventDefault()
  const fields = new FormData(form)
  const response = await fetch('/v1/customers', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      name: fields.get('name'),
      email: fields.get('email'),
    }),
  })
  result.textContent = `${response.status} ${await response.text()}`
})

// Ready: in dev, the sandbox was started before this module ran.
button.disabled = false
