/**
 * The breaking-change check of the OpenAPI document: compares `openapi.json`
 * with the document as last released (`etc/openapi.released.json`) using
 * api-smart-diff, and fails on any change it classifies as breaking
 * (a removed or renamed schema, operation, `operationId`, required response
 * field, request enum value or status, among others).
 *
 *   tsx scripts/openapi-diff.ts [released.json] [current.json]
 *   tsx scripts/openapi-diff.ts --accept   moves the baseline (see below)
 *
 * `--accept` moves the baseline to `openapi.json`: at a release, and for a
 * deliberate break, which it refuses unless a pending changeset
 * (`npx changeset`) declares a breaking bump of the package, so that the
 * break reaches CHANGELOG.md (docs/versioning.md).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import {
  addNonBreaking,
  apiCompare,
  openApi3AnnotateHook,
  openapi3Rules,
  type CompareRules,
  type Diff,
} from 'api-smart-diff'
import packageJson from '../package.json' with { type: 'json' }

const root = new URL('../', import.meta.url)
/** Where the document as last released is kept, from the repository root. */
export const RELEASED_DOCUMENT = 'etc/openapi.released.json'

type Rules = Record<string, any>

/** The tool's verbs, as its own descriptions write them. */
const ACTIONS = {
  add: 'Added',
  remove: 'Removed',
  replace: 'Replaced',
  rename: 'Renamed',
} as const

/**
 * api-smart-diff's OpenAPI 3 rules, with one addition: a changed or removed
 * `operationId` is breaking. (The other: `isRemovedEnumValue`.)
 */
function breakingChangeRules(): CompareRules {
  const rules = openapi3Rules() as Rules
  // @note The tool reads `operationId` as an annotation, but generated
  // clients name their functions after it (`setClock()`), so renaming one
  // breaks every caller as surely as removing the operation.
  const operation = rules['/paths']['/*']['/*'] as Rules
  operation['/operationId'] = { $: addNonBreaking }
  return rules as CompareRules
}

/**
 * The changes from `released` to `current` that break a client of
 * `released`, one line each; none when `current` is safe to ship.
 *
 * @example
 * findBreakingChanges(released, current)
 * // ['[Removed] operation DELETE /__sandbox/latency']
 */
export function findBreakingChanges(
  released: unknown,
  current: unknown,
): string[] {
  const { diffs } = apiCompare(released, current, {
    rules: breakingChangeRules(),
    annotateHook: (diff, context) =>
      diff.path.at(-1) === 'operationId'
        ? `[${ACTIONS[diff.action]}] operationId of ${String(diff.path[2]).toUpperCase()} ${diff.path[1]}: ${diff.before} → ${diff.after}`
        : openApi3AnnotateHook(diff, context),
  })
  const lines = diffs
    .filter(
      (diff) =>
        (diff.type === 'breaking' && !isAddedAnswerCode(diff)) ||
        isRemovedEnumValue(diff) ||
        isRemovedRequestField(diff),
    )
    .map((diff) => diff.description || describe(diff))
  // A change to a shared schema shows once per operation and status.
  return [...new Set(lines)]
}

/**
 * A value gone from an enum, in a request or an answer.
 *
 * @note The tool calls a value gone from an answer's enum harmless (the
 * server sends less), but generated clients type the enum as a union, and
 * `error.code === 'email_taken'` stops compiling once the value is gone.
 */
const isRemovedEnumValue = ({ action, path }: Diff): boolean =>
  action === 'remove' && path.at(-2) === 'enum'

/**
 * A code added under an error status an operation already lists.
 *
 * @note The tool calls any value added to an answer's enum breaking, but
 * docs/versioning.md promises new error codes under a status already
 * listed, and a client reads an unknown `code` by its status.
 */
const isAddedAnswerCode = ({ action, path }: Diff): boolean =>
  action === 'add' &&
  path[3] === 'responses' &&
  Number(path[4]) >= 400 &&
  path.at(-3) === 'code' &&
  path.at(-2) === 'enum'

/**
 * A field gone from a request body.
 *
 * @note The tool calls it harmless (the server needs less), but the
 * sandbox's bodies refuse unknown fields (`unknownFields: 'reject'`, and
 * `additionalProperties: false` in the document): a client that still
 * sends the field gets `422`.
 */
const isRemovedRequestField = ({ action, path }: Diff): boolean =>
  action === 'remove' &&
  path[3] === 'requestBody' &&
  path.at(-2) === 'properties'

/** A change the tool leaves undescribed: one under `components`. */
const describe = ({ action, path, before, after }: Diff): string =>
  `[${ACTIONS[action]}] ${path.join('/')}${action === 'remove' ? '' : `: ${brief(before)} → ${brief(after)}`}`

/** A value in at most 60 characters: a schema's JSON can be long. */
const brief = (value: unknown): string => {
  const text = JSON.stringify(value) ?? 'nothing'
  return text.length > 60 ? `${text.slice(0, 59)}…` : text
}

/**
 * Whether a pending changeset declares a breaking bump of the package:
 * `major`, or `minor` before 1.0 (semver's rule for 0.x, which changesets
 * follows).
 *
 * @example
 * if (!(await hasBreakingChangeset())) throw new Error('npx changeset first')
 */
export async function hasBreakingChangeset(
  folder: URL = new URL('.changeset/', root),
): Promise<boolean> {
  const names = (await readdir(folder).catch(() => [])).filter(
    (name) => name.endsWith('.md') && name !== 'README.md',
  )
  const breaking = packageJson.version.startsWith('0.')
    ? ['major', 'minor']
    : ['major']
  for (const name of names) {
    const text = await readFile(new URL(name, folder), 'utf8')
    const bump = new RegExp(
      `^["']?${packageJson.name}["']?:\\s*(\\w+)`,
      'm',
    ).exec(text)?.[1]
    if (bump && breaking.includes(bump)) return true
  }
  return false
}

const count = (changes: string[]): string =>
  `${changes.length} breaking change${changes.length === 1 ? '' : 's'}`

const readJson = async (path: string): Promise<unknown> =>
  JSON.parse(await readFile(new URL(path, root), 'utf8'))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  if (args.includes('--accept')) {
    // @note Additions move the baseline freely (at a release, so that they
    // are held to from then on); a break only under a changeset saying so.
    const breaking = findBreakingChanges(
      await readJson(RELEASED_DOCUMENT),
      await readJson('openapi.json'),
    )
    if (breaking.length > 0 && !(await hasBreakingChangeset())) {
      console.error(
        `Refusing to move ${RELEASED_DOCUMENT}: openapi.json has ${count(breaking)} and no pending changeset declares a breaking bump of ${packageJson.name}. Run npx changeset first and say what breaks.`,
      )
      process.exit(1)
    }
    await writeFile(
      new URL(RELEASED_DOCUMENT, root),
      await readFile(new URL('openapi.json', root), 'utf8'),
    )
    console.log(`${RELEASED_DOCUMENT} now is openapi.json`)
  } else {
    const [releasedPath = RELEASED_DOCUMENT, currentPath = 'openapi.json'] =
      args
    const breaking = findBreakingChanges(
      await readJson(releasedPath),
      await readJson(currentPath),
    )
    if (breaking.length > 0) {
      console.error(
        `${currentPath} breaks clients of ${releasedPath} (${count(breaking)}):`,
      )
      for (const line of breaking) console.error(`  ${line}`)
      console.error(
        'Put it back, or, if the break is deliberate, add a changeset that says so (npx changeset, a breaking bump) and run npm run check:openapi-diff -- --accept.',
      )
      process.exitCode = 1
    } else {
      console.log(`${currentPath}: no breaking change from ${releasedPath}`)
    }
  }
}
