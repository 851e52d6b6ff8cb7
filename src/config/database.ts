// Which database: a SQLite file (the default, in the data directory) or PostgreSQL.
import { resolve } from 'node:path'
import { ConfigError, int, type Read } from './parse'

export interface DatabaseSettings {
  /** A SQLite file path (from a path, `file:` or `sqlite:` URL, or the data-dir default);
   *  empty when PostgreSQL is selected. */
  databasePath: string
  /** A postgres:// or postgresql:// URL: PostgreSQL instead of the SQLite file. */
  postgresUrl?: string
  /** PostgreSQL connections per instance. */
  databasePoolSize: number
}

/** What AUTHD_DATABASE_URL may name: PostgreSQL, or a SQLite file (a path, sqlite: or file:). */
const DATABASE_URL_FORMS = 'AUTHD_DATABASE_URL must be postgres://user:password@host:5432/authd, or a SQLite file (a path, sqlite:PATH or file:PATH)'

export function databasePathFrom(databaseUrl: string | undefined, dataDir: string): string {
  if (!databaseUrl) return resolve(dataDir, 'authd.db')
  if (/^postgres(ql)?:/i.test(databaseUrl)) return ''
  // Any other scheme (a typo such as postgress://, or mysql://) is no file name: taken as one,
  // it made a SQLite file whose path held the URL's password, and printed it.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(databaseUrl) && !/^(sqlite|file):/i.test(databaseUrl)) throw new ConfigError(DATABASE_URL_FORMS)
  const path = databaseUrl.replace(/^(sqlite|file):(\/\/)?/i, '')
  if (!path) throw new ConfigError('AUTHD_DATABASE_URL must name a SQLite file')
  return resolve(path)
}

/** The PostgreSQL URL, if AUTHD_DATABASE_URL names one (checked: a host and a database). */
export function postgresUrlFrom(databaseUrl: string | undefined): string | undefined {
  if (!databaseUrl || !/^postgres(ql)?:/i.test(databaseUrl)) return undefined
  try {
    const url = new URL(databaseUrl)
    if (!url.hostname || url.pathname.length < 2) throw new Error()
    // The client decodes them: a bad escape (%ZZ) would fail later, as an unexpected error.
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
    const mode = url.searchParams.get('sslmode')
    if (mode !== null && !['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(mode)) throw new Error()
  } catch {
    throw new ConfigError('AUTHD_DATABASE_URL must be a URL such as postgres://user:password@host:5432/authd?sslmode=require')
  }
  return databaseUrl
}

export function readDatabaseSettings(read: Read, databaseUrl: string | undefined, dataDir: string): DatabaseSettings {
  return {
    databasePath: databasePathFrom(databaseUrl, dataDir),
    postgresUrl: postgresUrlFrom(databaseUrl),
    databasePoolSize: read('AUTHD_DATABASE_POOL', 10, int(1, 1000)),
  }
}
