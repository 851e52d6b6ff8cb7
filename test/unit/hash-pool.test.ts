import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { HashPool } from '../../src/core/accounts/hash-pool'

/** This process's threads: id, name and nice value (field 19 of /proc's stat). */
function threads(): Array<{ tid: number; name: string; nice: number }> {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    return { tid: Number(tid), name, nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) }
  })
}

describe('HashPool', () => {
  // First in this file, so no other pool's threads are about.
  it('hashes on its own threads, as many as its size, at the lowest CPU priority; the event loop keeps its own', async () => {
    const pool = new HashPool(2)
    try {
      await Promise.all([pool.hash('a', 64, 1), pool.hash('b', 64, 1), pool.hash('c', 64, 1)])
      const all = threads()
      expect(all.filter((t) => t.name === 'Worker').map((t) => t.nice)).toEqual([19, 19])
      expect(all.find((t) => t.tid === process.pid)!.nice).toBe(0)
    } finally {
      pool.close()
    }
  })

  it('hashes argon2id that an independent verifier accepts, and verifies what it made', async () => {
    const pool = new HashPool(2)
    try {
      const hash = await pool.hash('correct horse battery staple', 64, 1)
      expect(hash).toStartWith('$argon2id$v=19$m=64,t=1,p=1$')
      expect(await Bun.password.verify('correct horse battery staple', hash)).toBe(true)
      expect(await pool.verify('correct horse battery staple', hash)).toBe(true)
      expect(await pool.verify('correct horse battery stapler', hash)).toBe(false)
    } finally {
      pool.close()
    }
  })

  it('fails only the job that failed; the pool goes on hashing', async () => {
    const pool = new HashPool(1)
    try {
      const [broken, good] = await Promise.allSettled([pool.verify('x', 'not a hash'), pool.hash('x', 64, 1)])
      expect(broken.status).toBe('rejected')
      // The error names no secret: neither the password nor the hash.
      expect(String((broken as PromiseRejectedResult).reason)).not.toContain('not a hash')
      expect(good.status).toBe('fulfilled')
      expect(await pool.verify('x', (good as PromiseFulfilledResult<string>).value)).toBe(true)
    } finally {
      pool.close()
    }
  })

  it('rejects the jobs still running when closed', async () => {
    const pool = new HashPool(1)
    const running = pool.hash('x', 64 * 1024, 3)
    pool.close()
    await expect(running).rejects.toThrow('closed')
  })
})
