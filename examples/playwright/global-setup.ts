// One sandbox server for the whole run: every worker mints its accounts on it
// (its URL reaches them through CUSTOMER_TOKEN_SANDBOX_URL).
import { sandboxGlobalSetup } from 'customer-token-sandbox/playwright'

export default sandboxGlobalSetup({ seed: 1 })
