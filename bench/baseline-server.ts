// The yardsticks authd is measured against, in their own process: the least an Elysia server
// on bun:sqlite can do for the same request.
//   GET /healthz  a bare Elysia route
//   GET /issue    a fresh refresh token (set-up for /rotate)
//   GET /rotate   the refresh hot path and nothing else: look the token up by its SHA-256,
//                 spend it and insert its successor in one BEGIN IMMEDIATE, sign one ES256
//                 JWT, answer with the successor cookie. One transaction per request.
//   POST /login   the one piece of work a login cannot skip: read the JSON body and verify its
//                 password against an argon2id hash at authd's parameters (BASELINE_ARGON2, as
//                 JSON), no more verifies at once than cores. No lookup, no session, no token.
// BASELINE_SYNCHRONOUS picks the durability (NORMAL: no fsync per commit in WAL mode).
import { Database } from 'bun:sqlite'
import { Elysia } from 'elysia'
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { join } from 'node:path'

const dir = process.argv[2]
if (!dir) throw new Error('usage: bun bench/baseline-server.ts DIR')
const synchronous = process.env.BASELINE_SYNCHRONOUS ?? 'NORMAL'

const db = new Database(join(dir, `baseline-${synchronous.toLowerCase()}.db`), { create: true })
db.exec('PRAGMA busy_timeout = 5000')
db.exec('PRAGMA journal_mode = WAL')
db.exec(`PRAGMA synchronous = ${synchronous}`)
db.exec('CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, family TEXT NOT NULL, spent_at INTEGER)')

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url')
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
const findToken = db.prepare('SELECT id, family, spent_at FROM tokens WHERE hash = ?')
const spend = db.prepare('UPDATE tokens SET spent_at = ? WHERE id = ? AND spent_at IS NULL')
const insert = db.prepare('INSERT INTO tokens (id, hash, family, spent_at) VALUES (?, ?, ?, NULL)')
const rotate = db.transaction((id: string, successorHash: string, family: string) => {
  if (spend.run(Date.now(), id).changes !== 1) return false
  insert.run(crypto.randomUUID(), successorHash, family)
  return true
})

function accessToken(sub: string): string {
  const iat = Math.floor(Date.now() / 1000)
  const input = `${b64url({ alg: 'ES256', typ: 'JWT', kid: 'baseline' })}.${b64url({ iss: 'baseline', sub, iat, exp: iat + 900, jti: Bun.randomUUIDv7() })}`
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
}

const argon2 = { algorithm: 'argon2id' as const, ...JSON.parse(process.env.BASELINE_ARGON2 ?? '{"memoryCost":19456,"timeCost":2}') }
const passwordHash = await Bun.password.hash('correct horse battery staple', argon2)
// As authd's hash pool: more verifies at once than cores would only share the cores.
let verifying = 0
const waiting: Array<() => void> = []
async function verifyGated(password: string): Promise<boolean> {
  if (verifying >= navigator.hardwareConcurrency) await new Promise<void>((resolve) => waiting.push(resolve))
  else verifying++
  try {
    return await Bun.password.verify(password, passwordHash)
  } finally {
    const next = waiting.shift()
    if (next) next()
    else verifying--
  }
}

const app = new Elysia()
  .get('/healthz', () => ({ statusCode: 200, message: 'OK', data: { status: 'alive' } }))
  .get('/issue', ({ set }) => {
    const token = randomBytes(32).toString('base64url')
    insert.run(crypto.randomUUID(), sha256(token), crypto.randomUUID())
    set.headers['set-cookie'] = `refreshToken=${token}; HttpOnly; Path=/`
    return { ok: true }
  })
  .get('/rotate', ({ cookie, set }) => {
    const presented = String(cookie.refreshToken?.value ?? '')
    const found = findToken.get(sha256(presented)) as { id: string; family: string; spent_at: number | null } | null
    const successor = randomBytes(32).toString('base64url')
    if (!found || found.spent_at !== null || !rotate.immediate(found.id, sha256(successor), found.family)) {
      set.status = 401
      return { statusCode: 401, message: 'Unauthorized', data: null }
    }
    set.headers['set-cookie'] = `refreshToken=${successor}; HttpOnly; Path=/`
    set.status = 201
    return { statusCode: 201, message: 'Token refreshed', data: { response: { accessToken: accessToken(found.family) } } }
  })
  .post('/login', async ({ body, set }) => {
    const { password } = body as { password?: unknown }
    if (typeof password !== 'string' || !(await verifyGated(password))) {
      set.status = 401
      return { statusCode: 401, message: 'Unauthorized', data: null }
    }
    set.status = 201
    return { statusCode: 201, message: 'Login successful', data: null }
  })
  .listen({ port: 0, hostname: '127.0.0.1' })

console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${app.server!.port}` }))
process.on('SIGTERM', () => process.exit(0))
