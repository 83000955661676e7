// Installs a Debian package with apt-get for the find-*.mjs scripts, which
// fetch a test's browser or Redis as root in CI when none is found.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/**
 * Whether this process may install with apt-get: root on a system that has
 * it (the default of the find-*.mjs scripts' `install` option).
 *
 * @example
 * const install = canAptInstall()
 */
export function canAptInstall() {
  return process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')
}

function run(command, args) {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`,
    )
  }
}

/**
 * Installs `pkg` with apt-get (its recommended packages too only when
 * `recommends` is true), and throws with the command and its exit status when
 * that fails.
 *
 * @example
 * aptInstall('redis-server')
 * aptInstall('chromium', { recommends: true })
 */
export function aptInstall(pkg, { recommends = false } = {}) {
  // @note --reinstall also restores a binary that was removed by hand.
  const args = ['install', '-y', '--reinstall', pkg]
  if (!recommends) args.splice(2, 0, '--no-install-recommends')
  try {
    run('apt-get', args)
  } catch {
    // @note A fresh image has no package lists yet (and old ones name
    // versions the mirror has dropped); fetch them only then, since an
    // update reaches the network and takes a while.
    run('apt-get', ['update'])
    run('apt-get', args)
  }
}
