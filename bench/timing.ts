// Does a registered address take measurably longer than an unknown one? Paired timing:
// requests alternate registered / unknown (order flipped every pair, so drift and warm-up
// cancel out), and we report the median of the per-pair differences with a bootstrap 95%
// confidence interval. An interval that straddles 0 means no difference we can detect.
import { bootstrapMedianCI, median, NO_LIMITS, PASSWORD, startAuthd, timed } from './lib'

const PAIRS = Number(process.env.BENCH_PAIRS ?? 200)

export async function timingBench() {
  const authd = await startAuthd(NO_LIMITS)
  const registered = Array.from({ length: PAIRS }, (_, i) => `member${i}@example.com`)
  const importFile = registered.map((email) => ({ email, firstName: 'Bench', lastName: 'Member', password: PASSWORD }))
  await Bun.write(`/tmp/authd-bench-users.json`, JSON.stringify(importFile))
  authd.cli(['users', 'import', '--tenant', authd.tenantId, '/tmp/authd-bench-users.json'])
  const headers = { 'content-type': 'application/json', 'x-api-key': authd.key }
  const login = (email: string) => () => fetch(`${authd.api}/login`, { method: 'POST', headers, body: JSON.stringify({ email, password: 'a wrong password, paired' }) })
  const forgot = (email: string) => () => fetch(`${authd.api}/forgot-password/${email}`, { headers })

  const rows: string[] = []
  for (const [name, make] of [['POST /login (wrong password vs unknown e-mail)', login], ['GET /forgot-password (registered vs unknown)', forgot]] as const) {
    const differences: number[] = []
    const known: number[] = []
    for (let i = 0; i < PAIRS; i++) {
      const [a, b] = [make(registered[i]!), make(`stranger${i}@example.com`)]
      const first = i % 2 === 0
      const x = await timed(first ? a : b)
      const y = await timed(first ? b : a)
      const [reg, unk] = first ? [x, y] : [y, x]
      if (reg.status !== unk.status) throw new Error(`${name}: statuses differ (${reg.status} vs ${unk.status})`)
      differences.push(reg.ms - unk.ms)
      known.push(reg.ms)
    }
    const [lo, hi] = bootstrapMedianCI(differences)
    rows.push(
      `${name.padEnd(48)} median ${median(known).toFixed(2).padStart(7)} ms   registered - unknown: median ${median(differences).toFixed(3).padStart(7)} ms, 95% CI [${lo.toFixed(3)}, ${hi.toFixed(3)}] ms (${(median(differences) / median(known) * 100).toFixed(1)}% of a request)`,
    )
  }
  await authd.stop()
  console.log(`\npaired timing, ${PAIRS} pairs each (production argon2id parameters)\n`)
  for (const row of rows) console.log(row)
}

if (import.meta.main) await timingBench()
