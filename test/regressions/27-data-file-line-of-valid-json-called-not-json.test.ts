// Runs once: every server here names its own store.
import { appendFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { startServer, tempDataFile } from '../_servers.ts'

// A hand-edited data file whose last line was valid JSON of no kind the
// format has (`{"__proto__": {...}}`, `{"customers": [...]}`) was refused as
// "not valid JSON at line 62", which sent its reader looking for a missing
// comma. It now says the line is not in the data file format.

it('calls a line of valid JSON that is no line of the data file "not in the data file format", naming the kinds it may be', async () => {
  const file = await tempDataFile('cts-shape-')
  await (await startServer({ customersPerAccount: 1, dataFile: file })).close()
  await appendFile(file, '{"customers": [{"id": "cus_Hand"}]}\n')

  const start = startServer({ customersPerAccount: 1, dataFile: file })
  await expect(start).rejects.toThrow(
    /is not in the data file format at line \d+ \(expected one of \{"account": \{\.\.\.\}\}/,
  )
  await expect(start).rejects.not.toThrow(/not valid JSON/)
})

it('still calls a line that does not parse "not valid JSON"', async () => {
  const file = await tempDataFile('cts-shape-')
  await (await startServer({ customersPerAccount: 1, dataFile: file })).close()
  await appendFile(file, '{"customer": oops}\n')
  await expect(
    startServer({ customersPerAccount: 1, dataFile: file }),
  ).rejects.toThrow(/is not valid JSON at line \d+/)
})
