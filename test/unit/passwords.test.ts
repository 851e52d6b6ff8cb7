import { describe, expect, it } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AppError } from '../../src/core/errors'
import { EventLoopMeter } from '../../src/core/guards/event-loop-load'
import { hashParameters, pickParameters, PasswordHasher, type ParameterMix } from '../../src/core/accounts/passwords'
import { checkPasswordPolicy } from '../../src/core/accounts/password-policy'
import { tempDir } from '../helpers'

const options = { memoryKib: 64, timeCost: 1, concurrency: 2, maxWaitMs: 250, initialEstimateMs: 100 }

describe('PasswordHasher', () => {
  it('makes a dummy hash again after making it failed, instead of failing every unknown-address login', async () => {
    // (parameters that make the dummy hash last long enough to be cut short)
    const hasher = new PasswordHasher({ ...options, memoryKib: 64 * 1024, timeCost: 3 })
    const warming = hasher.warmUp()
    while (hasher.load.active === 0) await Bun.sleep(1)
    hasher.close() // the hashing threads end under the dummy hash
    await expect(warming).rejects.toThrow('closed')
    expect(await hasher.verifyDummy('a guess at a password', 0.5)).toBe(false)
    hasher.close()
  })

  it("reads the stored hashes' parameter mix once, again in the background after 10 minutes, and never makes a login wait for it", async () => {
    let now = 0
    const reads: Array<(mix: ParameterMix) => void> = []
    const hasher = new PasswordHasher({ ...options, now: () => now }, () => new Promise((resolve) => reads.push(resolve)))
    const parametersOf = async () => new Set(((await hasher.warmUp()) as string[]).map(hashParameters))
    try {
      // The first read is awaited (there is nothing older to answer with).
      const first = hasher.verifyDummy('a guess', 0.5)
      await Bun.sleep(1)
      expect(reads).toHaveLength(1)
      reads[0]!([{ parameters: 'm=128,t=1,p=1', count: 10 }])
      expect(await first).toBe(false)
      expect(await parametersOf()).toEqual(new Set(['m=64,t=1,p=1', 'm=128,t=1,p=1']))

      now += 9 * 60_000
      await hasher.verifyDummy('a guess', 0.5)
      expect(reads).toHaveLength(1)

      // Past 10 minutes: logins go on with the last mix while one read runs, however many come.
      now += 2 * 60_000
      expect(await Promise.all([hasher.verifyDummy('a guess', 0.1), hasher.verifyDummy('a guess', 0.9)])).toEqual([false, false])
      expect(reads).toHaveLength(2)
      expect(await parametersOf()).toEqual(new Set(['m=64,t=1,p=1', 'm=128,t=1,p=1']))
      // When it lands, the next logins use it.
      reads[1]!([{ parameters: 'm=256,t=1,p=1', count: 10 }])
      await Bun.sleep(1)
      expect(await parametersOf()).toEqual(new Set(['m=64,t=1,p=1', 'm=256,t=1,p=1']))
      expect(reads).toHaveLength(2)
    } finally {
      hasher.close()
    }
  })

  it('hashes with argon2id and verifies', async () => {
    const hasher = new PasswordHasher(options)
    const hash = await hasher.hash('correct horse battery staple')
    expect(hash).toStartWith('$argon2id$v=19$m=64,t=1,')
    expect(await hasher.verify('correct horse battery staple', hash)).toBe(true)
    expect(await hasher.verify('correct horse battery stapler', hash)).toBe(false)
    expect(hasher.needsRehash(hash)).toBe(false)
    expect(new PasswordHasher({ ...options, memoryKib: 128 }).needsRehash(hash)).toBe(true)
    expect(hasher.needsRehash('$2b$10$abcdefghijklmnopqrstuv')).toBe(true)
  })

  it('runs at most `concurrency` hashes, queues what fits in maxWaitMs, and refuses the rest with 503', async () => {
    const hasher = new PasswordHasher(options)
    let running = 0
    let peak = 0
    const releases: Array<() => void> = []
    const job = () =>
      hasher['limited'](async () => {
        peak = Math.max(peak, ++running)
        await new Promise<void>((resolve) => releases.push(resolve))
        running--
      })
    // 2 run; 4 wait (at most ceil(4/2) x 100 ms = 200 ms <= 250 ms); a 7th would wait 300 ms.
    const accepted = [job(), job(), job(), job(), job(), job()]
    await expect(job()).rejects.toEqual(new AppError(503, 'unavailable', 'Service unavailable', 1))
    while (releases.length > 0 || running > 0) {
      releases.shift()?.()
      await Bun.sleep(0)
    }
    await Promise.all(accepted)
    expect(peak).toBe(2)
  })

  it('leaves the event loop a core while it is busy: one hash fewer runs, and the queue estimate counts one slot fewer', async () => {
    let loopShare = 0.6
    const hasher = new PasswordHasher({ ...options, eventLoopShare: () => loopShare })
    let running = 0
    const releases: Array<() => void> = []
    const job = () =>
      hasher['limited'](async () => {
        running++
        await new Promise<void>((resolve) => releases.push(resolve))
        running--
      })
    // 1 runs; 2 wait (at most ceil(2/1) x 100 ms = 200 ms <= 250 ms); a 4th would wait 300 ms.
    const accepted = [job(), job(), job()]
    await Bun.sleep(0)
    expect(hasher.load).toMatchObject({ active: 1, waiting: 2, slots: 1 })
    expect(running).toBe(1)
    await expect(job()).rejects.toEqual(new AppError(503, 'unavailable', 'Service unavailable', 1))
    // The loop quietens: the next release starts both waiting hashes.
    loopShare = 0.1
    expect(hasher.load.slots).toBe(2)
    releases.shift()!()
    await Bun.sleep(0)
    expect(hasher.load).toMatchObject({ active: 2, waiting: 0 })
    expect(running).toBe(2)
    while (releases.length > 0) {
      releases.shift()!()
      await Bun.sleep(0)
    }
    await Promise.all(accepted)
    expect(hasher.load.active).toBe(0)
  })

  it('keeps its one hashing slot however busy the event loop is', async () => {
    const hasher = new PasswordHasher({ ...options, concurrency: 1, eventLoopShare: () => 1 })
    expect(hasher.load.slots).toBe(1)
    expect(await hasher.verify('correct horse battery staple', await hasher.hash('correct horse battery staple'))).toBe(true)
    hasher.close()
  })
})

describe('EventLoopMeter', () => {
  const fakeSchedstat = () => {
    const path = join(tempDir(), 'schedstat')
    let nowMs = 1_000
    let runNs = 5e9
    writeFileSync(path, `${runNs} 123 45\n`)
    const meter = new EventLoopMeter(path, () => nowMs)
    /** The loop spends `loopShare` of the next `ms` on a CPU, then the timer samples. */
    const spend = (ms: number, loopShare: number, samples = 1) => {
      for (let i = 0; i < samples; i++) {
        nowMs += ms
        runNs += ms * loopShare * 1e6
        writeFileSync(path, `${runNs} 456 78\n`)
        meter.sample()
      }
    }
    return { meter, spend }
  }

  it("follows the main thread's CPU time as a share of the wall time: a sustained load is busy within 300 ms, a quiet one within a second", () => {
    const { meter, spend } = fakeSchedstat()
    expect(meter.share).toBe(0)
    spend(100, 0.6, 3)
    expect(meter.share).toBeGreaterThanOrEqual(0.25)
    spend(100, 0.6, 20)
    expect(meter.share).toBeCloseTo(0.6, 1)
    spend(100, 0.1, 10)
    expect(meter.share).toBeLessThan(0.25)
  })

  it('does not count one busy window after a quiet spell as a busy loop', () => {
    const { meter, spend } = fakeSchedstat()
    spend(100, 0.1, 10)
    spend(100, 0.6) // a burst of requests arriving at once
    expect(meter.share).toBeGreaterThan(0.1)
    expect(meter.share).toBeLessThan(0.25)
  })

  it('weighs a late sample by its longer window', () => {
    const { meter, spend } = fakeSchedstat()
    spend(100, 0.1, 10)
    spend(1_000, 0.6) // the timer a second late: the loop was busy all that second
    expect(meter.share).toBeGreaterThan(0.5)
  })

  it('says nothing where the kernel does not (no such file), and samples a real share on Linux on its own timer', async () => {
    const missing = new EventLoopMeter(join(tmpdir(), 'no-such-dir', 'schedstat')).start()
    expect(missing.share).toBeUndefined()
    missing.stop()
    if (process.platform !== 'linux') return
    const meter = new EventLoopMeter().start()
    const spinUntil = performance.now() + 400
    let sampled = false
    // The loop spins; between spins it yields so the timer can sample what it spent.
    while (performance.now() < spinUntil) {
      const until = performance.now() + 20
      while (performance.now() < until);
      await Bun.sleep(1)
      sampled ||= meter.share! > 0
    }
    meter.stop()
    expect(sampled).toBe(true)
    expect(meter.share).toBeLessThanOrEqual(1)
  })
})

describe('checkPasswordPolicy', () => {
  const who = { email: 'ada.lovelace@example.com', firstName: 'Ada', lastName: 'Lovelace' }
  it.each([
    ['a 14-character password', 'abcdefghijklmn', 'Password must be at least 15 characters long'],
    ['a 129-character password', 'a'.repeat(129), 'Password must be at most 128 characters long'],
    ['one containing the e-mail address', 'write to ada.lovelace@example.com', 'Password must not contain your e-mail address'],
    ['one containing the last name', 'i am countess LOVELACE of tea', 'Password must not contain your name'],
    ['one containing the first name (here also in the e-mail local part)', 'ada and the engine', 'Password must not contain your name'],
    ['a short pattern repeated', 'abcabcabcabcabcabc', 'Password must not be a short pattern repeated'],
    ['one character repeated', 'zzzzzzzzzzzzzzzz', 'Password must not be a short pattern repeated'],
    ['a breached password', 'qwertyuiop12345', 'Password is too common: it appears in lists of breached passwords'],
    ['a breached password in capitals', 'PASSWORDPASSWORD', 'Password is too common: it appears in lists of breached passwords'],
    ['a breached password padded with digits and symbols', 'passwordpassword2024!', 'Password is too common: it appears in lists of breached passwords'],
  ])('refuses %s with a 400 naming the rule', async (_, password, message) => {
    await expect(checkPasswordPolicy(password, 15, who)).rejects.toMatchObject({ status: 400, code: 'weak_password', message })
  })

  it("refuses the e-mail address's local part as such, not as the address or the name", async () => {
    const grace = { email: 'amazing.grace@example.com', firstName: 'Grace', lastName: 'Hopper' }
    await expect(checkPasswordPolicy('hello amazing.grace of cobol', 15, grace)).rejects.toMatchObject({
      message: 'Password must not contain your name',
      details: { passwordRule: 'name' },
    })
    const navy = { email: 'rear.admiral@example.com', firstName: 'Grace', lastName: 'Hopper' }
    await expect(checkPasswordPolicy('the rear.admiral of cobol', 15, navy)).rejects.toMatchObject({
      message: 'Password must not contain the part of your e-mail address before the @',
      details: { passwordRule: 'email_local_part' },
    })
    await expect(checkPasswordPolicy('mail rear.admiral@example.com', 15, navy)).rejects.toMatchObject({ details: { passwordRule: 'email' } })
  })

  it('checks the blocklist at a lower configured minimum too', async () => {
    await expect(checkPasswordPolicy('baseball', 8, who)).rejects.toMatchObject({ status: 400, code: 'weak_password', message: 'Password is too common: it appears in lists of breached passwords', details: { passwordRule: 'common' } })
    expect(await checkPasswordPolicy('tangerine kayak', 8, who)).toBe('tangerine kayak')
  })

  it('accepts any characters, spaces included, and returns the NFKC form', async () => {
    expect(await checkPasswordPolicy('ｆｕｌｌｗｉｄｔｈ ｐａｓｓｗｏｒｄ', 15, who)).toBe('fullwidth password')
    expect(await checkPasswordPolicy('🦄 unicorns 🦄 everywhere', 15, who)).toBe('🦄 unicorns 🦄 everywhere')
  })
})

describe('pickParameters', () => {
  const mix = [
    { parameters: 'm=19456,t=2,p=1', count: 3 },
    { parameters: 'm=47104,t=1,p=1', count: 1 },
  ]
  it.each([
    [0, 'm=19456,t=2,p=1'],
    [0.74, 'm=19456,t=2,p=1'],
    [0.76, 'm=47104,t=1,p=1'],
    [0.9999, 'm=47104,t=1,p=1'],
  ])('at seed %p is %s (weighted by count)', (seed, expected) => {
    expect(pickParameters(mix, seed)).toBe(expected)
  })
  it('is null for an empty mix (the configured parameters are used)', () => {
    expect(pickParameters([], 0.5)).toBeNull()
  })
})
