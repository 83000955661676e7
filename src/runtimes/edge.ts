// The server's edge on a web Request: Host, Origin and admin-token checks before the sandbox reads it.
import { SandboxError } from '../request/errors.ts'

/**
 * The standalone server's edge: what it checks of a request before anything
 * else reads it (`Host`, `Origin`), so that no header a caller sends can
 * throw, and the admin surface stays with this machine. It reads a web
 * `Request` whose URL the adapter built from the request's path, never from
 * `Host`; what only the wire shows (the request target as sent, a second
 * `Host`, the header count) the adapter checks before (`node-edge.ts`).
 */

/** What the edge settles about one request that it lets through. */
export interface EdgeVerdict {
  /** The request's path, query excluded. */
  path: string
  /** Whether the path is the sandbox's own API (`/__sandbox/*`), which only this machine's pages may change. */
  sandboxApi: boolean
  /** The `Origin` sent, or null. */
  origin: string | null
  /** Whether that origin may read answers of the admin surface (no CORS grant otherwise). */
  trusted: boolean
}

/** Settings of `createEdge()`. */
export interface EdgeOptions {
  /** Whether the server listens on loopback only: then `/__sandbox/*` takes loopback `Host`s only. */
  loopback: boolean
  /** Origins that may call `/__sandbox/*` besides the server's own and loopback ones. */
  adminOrigins: readonly string[]
  /** Host names that `/__sandbox/*` of a loopback server answers besides loopback ones. */
  allowedHosts: readonly string[]
  /** The admin token, if any: with it a caller may ask the export for full secrets from anywhere. */
  adminToken: string | undefined
}

/** The edge of one server. */
export interface Edge {
  /**
   * The verdict on `request`, from the client at `ip` (srvx's
   * `request.ip`): let through, or refused with an error to answer.
   */
  check(request: Request, ip: string | undefined): EdgeVerdict | SandboxError
}

// RFC 3986 unreserved characters only: no userinfo, no percent-encoding.
const HOST_SYNTAX =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9._~-]{1,253})(?::(\d{0,5}))?$/
const EMPTY_ACE_LABEL = /(?:^|\.)xn--(?:\.|:|$)/i
const EMPTY_LABEL = /^\.|\.\./
const STATE_SAFE = new Set(['GET', 'HEAD'])

/**
 * The host name of a `Host` header value as a browser would read it
 * (`127.1` is `127.0.0.1`), or `undefined` when it is not a host: not an
 * RFC 3986 reg-name, IPv4 or `[IPv6]` with an optional port of 0-65535, or
 * something the WHATWG URL parser refuses (`foo.123`, `1.2.3.256`, `xn--`),
 * or a name with an empty label (`evil..com`).
 *
 * @example
 * hostnameOf('localhost:4100') // 'localhost'
 * hostnameOf('foo.123') // undefined
 */
export function hostnameOf(value: string): string | undefined {
  const match = HOST_SYNTAX.exec(value)
  if (!match) return undefined
  if (match[1] !== undefined && match[1] !== '' && Number(match[1]) > 65_535)
    return undefined
  // @note An ACE label with nothing after `xn--` encodes no name; Node 20's
  // URL parser refuses it and Node 24's accepts it: refuse it on both.
  if (EMPTY_ACE_LABEL.test(value)) return undefined
  // @note The URL parser keeps an empty label (`evil..com`, `.com`), which
  // names no host; a trailing dot (`example.com.`) is a full name and kept.
  if (EMPTY_LABEL.test(value)) return undefined
  try {
    return new URL(`http://${value}/`).hostname
  } catch {
    return undefined
  }
}

/**
 * Whether a host name (as `hostnameOf` gives it) names this machine:
 * `localhost` and its subdomains, 127.0.0.0/8 and `[::1]`.
 *
 * @example
 * isLoopbackName('127.0.0.1') // true
 */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase()
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  )
}

/**
 * Whether a socket's remote address is this machine.
 *
 * @example
 * isLoopbackAddress('::ffff:127.0.0.1') // true
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false
  return (
    address === '::1' ||
    /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address)
  )
}

/** `http(s)://host[:port]` in the form the `Origin` header carries, or undefined. */
function normaliseOrigin(value: string): URL | undefined {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(value)) return undefined
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

/**
 * Creates the edge of a server: checks `Host` on every path, and on
 * `/__sandbox/*` the rules that keep the admin surface to this machine and
 * its owner (DNS rebinding, foreign origins, CSRF).
 *
 * @example
 * const edge = createEdge({ loopback: true, adminOrigins: [], allowedHosts: [], adminToken: undefined })
 * const verdict = edge.check(request, request.ip)
 * if (verdict instanceof SandboxError) return router.answerError(verdict)
 */
export function createEdge(options: EdgeOptions): Edge {
  const adminOrigins = new Set(
    options.adminOrigins.map((origin) => {
      const url = normaliseOrigin(origin.replace(/\/+$/, ''))
      if (!url) {
        throw new RangeError(
          `Failed to start the sandbox server: adminOrigins holds "${origin}", which is not an origin; write it as http(s)://host[:port].`,
        )
      }
      return url.origin
    }),
  )
  const allowedHosts = new Set(
    options.allowedHosts.map((host) => {
      const name = hostnameOf(host)
      const hasPort = host.startsWith('[')
        ? host.includes(']:')
        : host.includes(':')
      if (name === undefined || hasPort) {
        throw new RangeError(
          `Failed to start the sandbox server: allowedHosts holds "${host}", which is not a host name (write it without a port).`,
        )
      }
      return name
    }),
  )

  const hostnames = new Map<string, string | undefined>()

  return {
    check(request, ip) {
      const host = request.headers.get('host') ?? undefined
      let hostname: string | undefined
      if (host !== undefined) {
        hostname = hostnames.get(host)
        if (hostname === undefined && !hostnames.has(host)) {
          hostname = hostnameOf(host)
          // A few names come again and again: parse each once.
          if (hostnames.size >= 256) hostnames.clear()
          hostnames.set(host, hostname)
        }
        if (hostname === undefined) {
          return new SandboxError(
            'invalid_host',
            `The Host header ${JSON.stringify(host.slice(0, 100))} is not a host: send a name, an IPv4 address or an [IPv6] address, with an optional port of 0-65535.`,
          )
        }
      }

      const href = request.url
      const path = pathOf(href)
      // @note Only a URL naming __sandbox can be the admin surface: the
      // others are not parsed. A `Request`'s URL is serialised, so its path
      // is normalised already (`/v1/../__sandbox/export` is the export), and
      // any segment named __sandbox counts: a base path may precede it.
      const sandboxApi =
        href.includes('__sandbox') && /(?:^|\/)__sandbox(?:\/|$)/.test(path)
      const origin = request.headers.get('origin')
      const verdict: EdgeVerdict = { path, sandboxApi, origin, trusted: true }
      if (!sandboxApi) return verdict

      if (
        options.loopback &&
        (hostname === undefined
          ? false
          : !isLoopbackName(hostname) && !allowedHosts.has(hostname))
      ) {
        return new SandboxError(
          'host_not_allowed',
          `This server listens on loopback and its admin surface answers loopback hosts only (localhost, 127.0.0.1, [::1]), not ${JSON.stringify(hostname)}: a page on another name that resolves here (DNS rebinding) must not reach it. Allow a name with the allowedHosts option (--allowed-hosts).`,
        )
      }
      const trusted =
        origin === null || isTrustedOrigin(origin, host, adminOrigins)
      verdict.trusted = trusted
      const { method } = request
      const changing = !STATE_SAFE.has(method)
      if (changing && !trusted) {
        return new SandboxError(
          'forbidden_origin',
          `The admin surface takes ${method} from this machine's pages only, not from the origin ${JSON.stringify(origin!.slice(0, 100))}. Allow an origin with the adminOrigins option (--admin-origins).`,
        )
      }
      if (
        changing &&
        origin === null &&
        request.headers.get('sec-fetch-site') === 'cross-site'
      ) {
        return new SandboxError(
          'forbidden_origin',
          `The admin surface takes ${method} from this machine's pages only, and the browser says this one comes from another site (Sec-Fetch-Site: cross-site).`,
        )
      }
      if (new URL(href).searchParams.get('secrets') === 'include') {
        if (!trusted) {
          return new SandboxError(
            'forbidden_origin',
            `Full secrets are never sent to the origin ${JSON.stringify(origin!.slice(0, 100))}; allow it with the adminOrigins option (--admin-origins) or ask without Origin.`,
          )
        }
        // Without an admin token the server is on loopback (it refuses to
        // start otherwise), so this holds for a proxy in front of it.
        if (options.adminToken === undefined && !isLoopbackAddress(ip)) {
          return new SandboxError(
            'forbidden_origin',
            'Full secrets go to this machine or to a holder of the admin token only.',
          )
        }
      }
      return verdict
    },
  }
}

/**
 * The path of a serialised URL, query and fragment excluded, without
 * building a `URL`.
 *
 * @example
 * pathOf('http://localhost:4100/v1/customers?limit=2') // '/v1/customers'
 */
function pathOf(href: string): string {
  const scheme = href.indexOf('://')
  const slash = href.indexOf('/', scheme === -1 ? 0 : scheme + 3)
  if (slash === -1) return '/'
  let end = href.length
  const query = href.indexOf('?', slash)
  if (query !== -1) end = query
  const hash = href.indexOf('#', slash)
  if (hash !== -1 && hash < end) end = hash
  return href.slice(slash, end)
}

/** Whether `origin` is the server's own, a loopback one or one allowed by name. */
function isTrustedOrigin(
  origin: string,
  host: string | undefined,
  allowed: ReadonlySet<string>,
): boolean {
  const url = normaliseOrigin(origin)
  if (!url) return false
  if (allowed.has(url.origin)) return true
  if (isLoopbackName(url.hostname)) return true
  return (
    host !== undefined &&
    url.protocol === 'http:' &&
    url.host === new URL(`http://${host}/`).host
  )
}
