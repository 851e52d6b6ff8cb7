// `npm run bench -- seed …`: fills a database for the scale bench (bench/scale.ts) or by hand.
//
//   npm run bench -- seed --users 1000000 --data-dir /tmp/authd-big          (SQLite)
//   npm run bench -- seed --users 1000000 --database-url postgres://…/big     (PostgreSQL)
//   options: --tokens N (default 20 per user), --tenants N, --audit-per-user N, --mail-per-user N
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { postgresSink, sqliteSink } from './seed-sinks'
import { progressBar, seedDatabase } from './seed'

export async function seedCommand(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      users: { type: 'string', default: '20000' },
      tokens: { type: 'string' },
      tenants: { type: 'string' },
      'audit-per-user': { type: 'string' },
      'mail-per-user': { type: 'string' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      'large-tenant': { type: 'string' },
    },
  })
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value.replaceAll('_', '')))
  const url = values['database-url'] ?? process.env.AUTHD_DATABASE_URL
  const dataDir = values['data-dir'] ?? process.env.AUTHD_DATA_DIR
  if (!url && !dataDir) throw new Error('say where: --data-dir DIR (SQLite) or --database-url postgres://… (PostgreSQL)')
  const sink = url ? await postgresSink(url) : sqliteSink(join(dataDir!, 'authd.db'))
  const bar = progressBar(`seed ${sink.kind}`)
  try {
    const result = await seedDatabase(
      sink,
      { users: number(values.users)!, tokens: number(values.tokens), tenants: number(values.tenants), auditPerUser: number(values['audit-per-user']), mailPerUser: number(values['mail-per-user']), largeTenantId: values['large-tenant'] },
      bar,
    )
    bar.finish()
    const rows = Object.values(result.counts).reduce((a, b) => a + b, 0)
    console.log(JSON.stringify({ engine: sink.kind, largeTenantId: result.largeTenantId, seconds: Number(result.seconds.toFixed(1)), rowsPerSecond: Math.round(rows / result.seconds), counts: result.counts }, null, 2))
  } finally {
    await sink.close()
  }
}
