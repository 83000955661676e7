// Preloaded with --import: prints this process's peak RSS when it exits.
import { writeSync } from 'node:fs'

process.on('exit', () => {
  writeSync(2, `\nmax-rss-kb=${process.resourceUsage().maxRSS}\n`)
})
