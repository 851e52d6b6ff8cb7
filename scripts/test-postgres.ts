// The second pass of `npm test`: the HTTP and security scenarios again, on PostgreSQL (each
// test makes and drops its own database). Skipped with one line when no server answers,
// unless AUTHD_TEST_REQUIRE_POSTGRES=1 (CI), where that fails.
import { SQL } from 'bun'

const url = process.env.AUTHD_TEST_POSTGRES_URL || 'postgres://root@127.0.0.1:5432/test'
const shown = url.replace(/\/\/[^@]*@/, '//…@')
// Scenarios that read SQLite's own files (raw-file searches, WAL, kill -9 of a SQLite writer)
// stay SQLite-only; everything else runs on both engines, and so do the real proxies in front
// of forward authentication (their sessions and rules are the store's) and Apache's mod_oauth2
// as a resource server (introspection reads the store's clients), and the admin console in
// Chromium (every section's journey reads and writes the store).
const SUITES = ['test/http', 'test/security/bursts', 'test/security/proof-races', 'test/security/enumeration', 'test/security/limits', 'test/security/lockout', 'test/security/input', 'test/security/admin-actions', 'test/security/tokens', 'test/security/client-ip', 'test/security/refusals', 'test/security/secrets', 'test/query-plans.test.ts', 'test/e2e/forward-auth-proxies.test.ts', 'test/e2e/mod-oauth2.test.ts', 'test/e2e/console-browser.test.ts']

try {
  const sql = new SQL(url, { max: 1, connectionTimeout: 3 })
  await sql`SELECT 1`
  await sql.close()
} catch (error) {
  const reason = `no PostgreSQL server answered at ${shown} (${(error as Error).message})`
  if (process.env.AUTHD_TEST_REQUIRE_POSTGRES === '1') {
    console.error(`PostgreSQL pass failed: ${reason}`)
    process.exit(1)
  }
  console.log(`PostgreSQL pass skipped: ${reason}; set AUTHD_TEST_POSTGRES_URL to run it`)
  process.exit(0)
}

console.log(`\nPostgreSQL pass: ${SUITES.join(' ')} on ${shown}`)
const run = Bun.spawn([process.execPath, 'test', '--timeout', '30000', ...SUITES], { env: { ...process.env, AUTHD_TEST_ENGINE: 'postgres' }, stdout: 'inherit', stderr: 'inherit' })
process.exit(await run.exited)
