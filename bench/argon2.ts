export {}

// How the argon2id parameters were chosen: OWASP's equivalent minimum configurations, timed
// on this machine. Each costs about the same to an attacker; they differ in memory held per
// concurrent hash (which bounds a login flood's memory) and in CPU time per login.
const CANDIDATES = [
  { memoryCost: 47104, timeCost: 1 },
  { memoryCost: 19456, timeCost: 2 },
  { memoryCost: 12288, timeCost: 3 },
  { memoryCost: 9216, timeCost: 4 },
  { memoryCost: 7168, timeCost: 5 },
]
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20)

console.log(`\nargon2id (p=1), ${ROUNDS} hashes each, one at a time\n`)
console.log(`${'parameters'.padEnd(22)} ${'median ms'.padStart(9)} ${'memory per hash'.padStart(16)}`)
for (const params of CANDIDATES) {
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now()
    await Bun.password.hash('correct horse battery staple', { algorithm: 'argon2id', ...params })
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  const label = `m=${params.memoryCost / 1024} MiB, t=${params.timeCost}`
  console.log(`${label.padEnd(22)} ${times[Math.floor(times.length / 2)]!.toFixed(1).padStart(9)} ${`${(params.memoryCost / 1024).toFixed(0)} MiB`.padStart(16)}`)
}
