// PostgreSQL for the tests: the server named by AUTHD_TEST_POSTGRES_URL, or this project's
// machines' own (127.0.0.1:5432, trust authentication, role root, database test). Each test
// file makes its own databases and drops them. Where no server answers, the PostgreSQL
// suites are skipped with one line saying so, unless AUTHD_TEST_REQUIRE_POSTGRES=1 (CI sets
// it), where that is a failure.
import { SQL } from 'bun'
import { afterAll, beforeAll, describe, it } from 'bun:test'

export const PG_ADMIN_URL = process.env.AUTHD_TEST_POSTGRES_URL || 'postgres://root@127.0.0.1:5432/test'
const required = process.env.AUTHD_TEST_REQUIRE_POSTGRES === '1'

async function probe(): Promise<string | null> {
  const sql = new SQL(PG_ADMIN_URL, { connectionTimeout: 3, max: 1 })
  try {
    await sql`SELECT 1`
    return null
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    await sql.close().catch(() => {})
  }
}

const unreachable = await probe()
let announced = false

/** A `describe` that runs where PostgreSQL answers, and otherwise says once why it is skipped. */
export function describePostgres(name: string, body: () => void) {
  if (unreachable === null) return describe(name, body)
  if (required) {
    return describe(name, () => {
      it('needs PostgreSQL (AUTHD_TEST_REQUIRE_POSTGRES=1)', () => {
        throw new Error(`PostgreSQL did not answer at ${PG_ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')}: ${unreachable}`)
      })
    })
  }
  if (!announced) {
    announced = true
    console.log(`PostgreSQL suites skipped: no server answered at ${PG_ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')} (${unreachable}); set AUTHD_TEST_POSTGRES_URL`)
  }
  return describe.skip(name, body)
}

/** A new, empty database of its own; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `authd_test_${Bun.randomUUIDv7().replaceAll('-', '')}`
  const admin = new SQL(PG_ADMIN_URL, { max: 1 })
  await admin.unsafe(`CREATE DATABASE "${name}"`)
  await admin.close()
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const sql = new SQL(PG_ADMIN_URL, { max: 1 })
      await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await sql.close()
    },
  }
}

/** Inside a describePostgres: a fresh database for the block, dropped after it; returns its URL's getter. */
export function useTestDatabase(): () => string {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database?.drop())
  return () => database!.url
}
