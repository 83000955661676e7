// Installs a Debian package with apt-get for the find-*.mjs scripts, which
// fetch a test's browser or Redis as root in CI when none is found.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

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

/** The release's code name (`bookworm`), from /etc/os-release. */
function codename() {
  try {
    const release = readFileSync('/etc/os-release', 'utf8')
    return /^VERSION_CODENAME=(\w+)$/m.exec(release)?.[1]
  } catch {
    return undefined
  }
}

/**
 * Installs `pkg` with apt-get (its recommended packages too only when
 * `recommends` is true), and throws with the command and its exit status when
 * that fails. With `backports`, a package the release lacks comes from its
 * backports suite, which is added to apt's sources for it.
 *
 * @example
 * aptInstall('redis-server')
 * aptInstall('chromium', { recommends: true })
 * aptInstall('valkey-server', { backports: true })
 */
export function aptInstall(
  pkg,
  { recommends = false, backports = false } = {},
) {
  // @note --reinstall also restores a binary that was removed by hand.
  const args = ['install', '-y', '--reinstall', pkg]
  if (!recommends) args.splice(2, 0, '--no-install-recommends')
  try {
    run('apt-get', args)
    return
  } catch {
    // @note A fresh image has no package lists yet (and old ones name
    // versions the mirror has dropped); fetch them only then, since an
    // update reaches the network and takes a while.
    run('apt-get', ['update'])
  }
  try {
    run('apt-get', args)
  } catch (error) {
    const suite = backports && codename() && `${codename()}-backports`
    if (!suite) throw error
    // @note Debian 12 packages Valkey in bookworm-backports alone (Debian
    // 13 in main): that suite is added as a sources file of its own, and
    // the package asked of it.
    writeFileSync(
      `/etc/apt/sources.list.d/${suite}.sources`,
      `Types: deb\nURIs: http://deb.debian.org/debian\nSuites: ${suite}\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`,
    )
    run('apt-get', ['update'])
    run('apt-get', [...args.slice(0, -1), '-t', suite, pkg])
  }
}
