/**
 * The API report of the TypeScript surface: API Extractor reads the built
 * declarations of every export of package.json (`dist/*.d.ts`) and writes
 * what they export to `etc/api/<export>.api.md`. `--check` fails instead
 * when a report would change, so a changed exported type is a failing test
 * until the report is updated on purpose (docs/versioning.md).
 *
 *   tsx scripts/api-report.ts           updates etc/api/
 *   tsx scripts/api-report.ts --check   fails on a changed exported type
 *   … --root DIR                        the package in DIR, not this one
 *
 * It reads dist/: build first (npm run check:api does).
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CompilerState,
  ConsoleMessageId,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type IConfigFile,
} from '@microsoft/api-extractor'
import packageJson from '../package.json' with { type: 'json' }

// `--root DIR` reads another copy of the package (the tests break one).
const rootFlag = process.argv.indexOf('--root')
const root =
  rootFlag === -1
    ? fileURLToPath(new URL('../', import.meta.url))
    : `${process.argv[rootFlag + 1]}/`
/** Where the committed reports are, from the repository root. */
export const REPORT_FOLDER = 'etc/api'

/**
 * Each export of package.json that has types, by the name of its report:
 * `index` for `.`, `node` for `./node`.
 *
 * @example
 * reportedEntries() // [['index', 'dist/index.d.ts'], ['node', 'dist/node.d.ts'], …]
 */
export function reportedEntries(): [name: string, types: string][] {
  return Object.entries(packageJson.exports).flatMap(([subpath, target]) =>
    typeof target === 'object' && target !== null && 'types' in target
      ? [
          [
            subpath === '.' ? 'index' : subpath.slice(2),
            target.types.slice(2),
          ] as [string, string],
        ]
      : [],
  )
}

const configFor = (
  name: string,
  types: string,
  tempFolder: string,
): ExtractorConfig => {
  const configObject: IConfigFile = {
    projectFolder: root,
    mainEntryPointFilePath: join(root, types),
    compiler: {
      // @note The declarations import msw, zod and node types: resolve them
      // as a consumer's NodeNext project does, without the repo's tsconfig
      // (which type-checks sources, not dist/).
      overrideTsconfig: {
        compilerOptions: {
          lib: ['ES2023', 'DOM', 'DOM.Iterable'],
          types: ['node'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          skipLibCheck: true,
        },
      },
    },
    apiReport: {
      enabled: true,
      reportFolder: join(root, REPORT_FOLDER),
      reportTempFolder: tempFolder,
      reportFileName: name,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    // The report is the contract; doc-comment style is not checked here.
    messages: {
      compilerMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
      },
      extractorMessageReporting: {
        default: {
          logLevel: ExtractorLogLevel.None,
          addToApiReportFile: false,
        },
      },
      tsdocMessageReporting: {
        default: {
          logLevel: ExtractorLogLevel.None,
          addToApiReportFile: false,
        },
      },
    },
  }
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJsonFullPath: join(root, 'package.json'),
  })
}

/** The lines that differ between two reports, `-` old and `+` new. */
const changedLines = (before: string, after: string): string[] => {
  const old = new Set(before.split('\n'))
  const now = new Set(after.split('\n'))
  return [
    ...[...old].filter((line) => !now.has(line)).map((line) => `- ${line}`),
    ...[...now].filter((line) => !old.has(line)).map((line) => `+ ${line}`),
  ]
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check')
  const entries = reportedEntries()
  const missing = entries.filter(([, types]) => !existsSync(join(root, types)))
  if (missing.length > 0) {
    console.error(
      `No ${missing.map(([, types]) => types).join(', ')}: build first (npx tsdown).`,
    )
    process.exit(1)
  }
  await mkdir(join(root, REPORT_FOLDER), { recursive: true })
  const tempFolder = await mkdtemp(join(tmpdir(), 'api-report-'))
  try {
    // One TypeScript program for every entry, rather than one each.
    const [first] = entries
    const compilerState = CompilerState.create(
      configFor(first![0], first![1], tempFolder),
      { additionalEntryPoints: entries.map(([, types]) => join(root, types)) },
    )
    let changed = 0
    for (const [name, types] of entries) {
      const config = configFor(name, types, tempFolder)
      const result = Extractor.invoke(config, {
        localBuild: !check,
        compilerState,
        // Only problems: not which TypeScript it bundles, nor each step,
        // nor its advice to copy a temp file (this script says what to run).
        messageCallback: (message) => {
          if (
            message.logLevel === ExtractorLogLevel.Info ||
            message.logLevel === ExtractorLogLevel.Verbose ||
            message.messageId === ConsoleMessageId.ApiReportNotCopied ||
            message.messageId === ConsoleMessageId.ApiReportCreated
          )
            message.handled = true
        },
      })
      if (!result.succeeded && !result.apiReportChanged) {
        console.error(`API Extractor failed on ${types}`)
        process.exitCode = 1
        continue
      }
      if (!result.apiReportChanged) continue
      changed++
      if (!check) {
        console.log(`updated ${REPORT_FOLDER}/${name}.api.md`)
        continue
      }
      const before = await readFile(config.reportFilePath, 'utf8').catch(
        () => '',
      )
      const after = await readFile(config.reportTempFilePath, 'utf8')
      console.error(
        `The exported types of ${packageJson.name}${name === 'index' ? '' : `/${name}`} changed (${REPORT_FOLDER}/${name}.api.md):`,
      )
      for (const line of changedLines(before, after).slice(0, 40))
        console.error(`  ${line}`)
    }
    if (check && changed > 0) {
      console.error(
        'Put them back, or, if the change is deliberate, run npm run api-report and commit the reports with a changeset (npx changeset) that says what changed.',
      )
      process.exitCode = 1
    } else if (check) {
      console.log(`${entries.length} API reports match ${REPORT_FOLDER}/`)
    }
  } finally {
    await rm(tempFolder, { recursive: true, force: true })
  }
}
