// Retention keeps the SQLite file bounded (issue 37): a simulated stretch of traffic at a fixed
// daily rate (logins, each a session with a day of refreshes, logouts, audit rows, mail,
// password-reset requests), one day at a time, with authd's own retention (core/retention.ts,
// its default settings unless AUTHD_RETAIN_* say otherwise) run at the end of each simulated
// day on a clock moved to it. Prints the file's size as the days pass, and the longest time one
// retention batch took (on SQLite a batch is one DELETE statement: about how long it held the
// write lock). The traffic's rows are written in bulk (bench/seed-sinks.ts), shaped as authd
// writes them; the deleting is authd's.
//
//   bun bench/retention.ts                        (540 days, 1,000 logins a day)
//   BENCH_DAYS=400 BENCH_LOGINS_PER_DAY=5000 AUTHD_RETAIN_AUDIT=90d bun bench/retention.ts
import { statSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { loadConfig } from '../src/config'
import { maskEmail } from '../src/core/audit/audit'
import { pruneExpiredData, retentionPolicy } from '../src/core/retention/retention'
import type { PruneTarget } from '../src/core/retention/store'
import { randomToken, sha256 } from '../src/core/secrets'
import { openRuntime } from '../src/runtime'
import { percentile } from './lib'
import { COLUMNS } from './seed'
import { sqliteSink } from './seed-sinks'
import { seedDatabase } from './seed'

const DAY = 86_400_000
const DAYS = Number(process.env.BENCH_DAYS ?? 540)
const LOGINS_PER_DAY = Number(process.env.BENCH_LOGINS_PER_DAY ?? 1000)
const REFRESHES_PER_SESSION = Number(process.env.BENCH_REFRESHES_PER_SESSION ?? 10)
const USERS = Number(process.env.BENCH_USERS ?? 20_000)

export async function retentionBench() {
  const dir = mkdtempSync(join(tmpdir(), 'authd-bench-retention-'))
  const start = Date.UTC(2025, 0, 1)
  let now = start
  const clock = { now: () => now }
  const config = loadConfig(process.env, { dataDir: dir })
  const runtime = await openRuntime(config, { clock })
  const sink = sqliteSink(config.databasePath)
  try {
    // The users (no history yet: the simulation makes it).
    await seedDatabase(sink, { users: USERS, tokens: USERS, auditPerUser: 0, mailPerUser: 0, now: start, days: 1 })
    const db = new Database(config.databasePath, { readonly: true })
    const users = db.query('SELECT id, tenant_id AS tenantId, email FROM users').all() as Array<{ id: string; tenantId: string; email: string }>
    db.close()
    const uuidAt = (ms: number) => Bun.randomUUIDv7(undefined, ms)
    const batchMs: number[] = []
    const batchRows: Array<{ target: PruneTarget; rows: number; ms: number }> = []
    const sizes: Array<{ day: number; bytes: number; freePages: number; pages: number }> = []
    const fileBytes = () => ['', '-wal'].reduce((n, suffix) => n + (statSync(`${config.databasePath}${suffix}`, { throwIfNoEntry: false })?.size ?? 0), 0)
    let rng = 1
    const rand = () => ((rng = (rng * 48271) % 2147483647) / 2147483647)

    for (let day = 0; day < DAYS; day++) {
      const dayStart = start + day * DAY
      const rows: Record<string, unknown[][]> = { refresh_families: [], refresh_tokens: [], audit_events: [], mail_outbox: [], password_reset_requests: [] }
      for (let l = 0; l < LOGINS_PER_DAY; l++) {
        const user = users[Math.floor(rand() * users.length)]!
        const at = dayStart + Math.floor((l / LOGINS_PER_DAY) * DAY)
        const familyId = uuidAt(at)
        // Half log out the same day; the others run to their absolute end (90 days).
        const revokedAt = rand() < 0.5 ? at + 8 * 3_600_000 : null
        rows.refresh_families!.push([familyId, user.id, user.tenantId, true, at, at + config.sessionMaxAgeSec * 1000, revokedAt, revokedAt === null ? null : 'logout', 'pwd', at])
        for (let k = 0; k <= REFRESHES_PER_SESSION; k++) {
          const t = at + k * 15 * 60_000
          rows.refresh_tokens!.push([uuidAt(t), familyId, sha256(randomToken(32)), t, t + 30 * DAY, k === REFRESHES_PER_SESSION ? null : t + 15 * 60_000, null, '203.0.113.7', 'Mozilla/5.0'])
        }
        rows.audit_events!.push([at, 'login.succeeded', user.tenantId, user.id, '203.0.113.7', 'Mozilla/5.0', null, JSON.stringify({ email: maskEmail(user.email), rememberMe: true, trustedDevice: false })])
        if (revokedAt !== null) rows.audit_events!.push([revokedAt, 'logout', user.tenantId, user.id, '203.0.113.7', 'Mozilla/5.0', null, null])
        if (l % 10 === 0) {
          rows.mail_outbox!.push([uuidAt(at), user.tenantId, 'password-reset-otp', user.email, 'Your code', null, null, 'sent', 1, at, null, null, at + 600_000, at, at + 2000])
          rows.password_reset_requests!.push([user.tenantId, sha256(`${user.tenantId}:${user.email}`), at, true, 0])
        }
      }
      for (const [table, tableRows] of Object.entries(rows)) {
        for (let i = 0; i < tableRows.length; i += 5000) await sink.insert(table, [...COLUMNS[table as keyof typeof COLUMNS]], tableRows.slice(i, i + 5000))
      }
      // The day's rows out of the WAL first: an automatic checkpoint of them would otherwise fall
      // into whichever commit comes next, a retention batch here (a request, in a live server).
      sink.checkpoint()
      now = dayStart + DAY
      await pruneExpiredData(runtime, {
        pauseMs: 0,
        batchMs: Number(process.env.BENCH_BATCH_MS ?? 10),
        onBatch: (target, n, ms) => {
          if (n === 0 && ms < 0.001) return
          batchMs.push(ms)
          batchRows.push({ target, rows: n, ms })
        },
      })
      if ((day + 1) % 30 === 0 || day === DAYS - 1) {
        const db = new Database(config.databasePath)
        db.run('PRAGMA wal_checkpoint(TRUNCATE)')
        const pages = (db.query('PRAGMA page_count').get() as { page_count: number }).page_count
        const freePages = (db.query('PRAGMA freelist_count').get() as { freelist_count: number }).freelist_count
        db.close()
        sizes.push({ day: day + 1, bytes: fileBytes(), pages, freePages })
        process.stderr.write(`day ${day + 1}: ${(fileBytes() / 1048576).toFixed(1)} MiB\n`)
      }
    }
    batchMs.sort((a, b) => a - b)
    const slowest = batchRows.reduce((a, b) => (b.ms > a.ms ? b : a))
    const policy = retentionPolicy(config)
    const days = (ms: number) => `${Math.round(ms / DAY)} d`
    console.log(`\nRetention: ${DAYS} simulated days, ${LOGINS_PER_DAY} logins a day (a session each, ${REFRESHES_PER_SESSION} refreshes, half logged out the same day), ${USERS.toLocaleString('en')} users`)
    console.log(`settings: audit ${days(policy.auditEvents)}, ended sessions ${days(policy.refreshFamilies)}, sent mail ${days(policy.sentMail)}, reset data ${days(policy.resetRequests)}; session max age ${Math.round(config.sessionMaxAgeSec / 86400)} d`)
    console.log(`${'day'.padStart(5)} ${'file MiB'.padStart(9)} ${'free pages'.padStart(11)}`)
    for (const s of sizes) console.log(`${String(s.day).padStart(5)} ${(s.bytes / 1048576).toFixed(1).padStart(9)} ${String(s.freePages).padStart(11)}`)
    console.log(`retention batches: ${batchMs.length}, p50 ${percentile(batchMs, 50).toFixed(2)} ms, p99 ${percentile(batchMs, 99).toFixed(2)} ms, longest ${slowest.ms.toFixed(2)} ms (${slowest.target}, ${slowest.rows} rows)`)
    const byTarget = new Map<PruneTarget, { rows: number; batches: number; longest: number }>()
    for (const b of batchRows) {
      const t = byTarget.get(b.target) ?? { rows: 0, batches: 0, longest: 0 }
      byTarget.set(b.target, { rows: t.rows + b.rows, batches: t.batches + 1, longest: Math.max(t.longest, b.ms) })
    }
    for (const [target, t] of byTarget) if (t.rows > 0) console.log(`  ${target.padEnd(20)} ${String(t.rows).padStart(10)} rows in ${String(t.batches).padStart(6)} batches, longest ${t.longest.toFixed(1)} ms`)
  } finally {
    await sink.close()
    runtime.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) await retentionBench()
