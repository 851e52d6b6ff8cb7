// The compiled executable for end-to-end tests: built once per test run, by `npm run build`.
import { afterAll, beforeAll } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './helpers'

export const ROOT = join(import.meta.dir, '..')
export const BINARY = join(ROOT, 'dist/authd')

let built: Promise<void> | undefined

export function buildBinary(): Promise<void> {
  built ??= (async () => {
    const build = Bun.spawn([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    if ((await build.exited) !== 0) throw new Error(`npm run build failed:\n${await new Response(build.stderr).text()}`)
  })()
  return built
}

/** Starts `authd serve --port 0` and resolves once it logs the address it listens on. */
export async function serveBinary(dataDir: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn([BINARY, '--data-dir', dataDir, 'serve', '--port', '0'], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? '', AUTHD_ARGON2_MEMORY_KIB: '64', AUTHD_ARGON2_TIME_COST: '1', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const buffered = await untilListening(proc)
  const listening = JSON.parse(buffered.split('\n').find((line) => line.includes('"msg":"listening"'))!)
  return { proc, url: listening.url as string, listening: listening as { url: string; metrics: string; database: string; mail: string }, startupLog: buffered }
}

/** Reads a starting `authd serve`'s log until it says it listens (the binary or the CLI from source); what it logged so far. */
export async function untilListening(proc: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> }): Promise<string> {
  const reader = proc.stdout.getReader()
  let buffered = ''
  while (!buffered.includes('"msg":"listening"')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`authd serve exited early: ${await new Response(proc.stderr).text()}`)
    buffered += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return buffered
}

/** The rest of a stream that serveBinary already started reading. */
export async function readRest(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return text
    text += new TextDecoder().decode(value)
  }
}

/** A tenant, an API key and a user with `password`, made through the CLI (`authd` runs it). */
export async function setUpAccount(
  authd: (args: string[], options?: { stdin?: string }) => Promise<{ json: any }>,
  email: string,
  password: string,
): Promise<{ tenantId: string; key: string }> {
  const { tenantId } = (await authd(['--json', 'tenants', 'create', '--name', 'Acme'])).json
  const { key } = (await authd(['--json', 'api-keys', 'create', '--tenant', tenantId])).json
  await authd(['users', 'create', '--tenant', tenantId, '--email', email, '--first-name', 'Ada', '--last-name', 'Lovelace', '--password-stdin'], { stdin: password })
  return { tenantId, key }
}

/**
 * For a test file that drives the binary: builds it (once per run) and makes a fresh
 * directory before the file's tests, removed after them. Returns the directory's getter.
 */
export function useBinaryAndTempDir(): () => string {
  let dir = ''
  beforeAll(async () => {
    await buildBinary()
    dir = tempDir()
  }, 180_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  return () => dir
}
