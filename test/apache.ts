// A throw-away Apache for the suite's real peers (mod_auth_openidc as a relying party,
// mod_oauth2 as a resource server): in the foreground (-X), in a directory of its own, on a
// port of its own, never the system's service. The caller gives the pages, the modules beyond
// the base ones and the rest of the configuration.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDir } from './helpers'

export const APACHE = '/usr/sbin/apache2'
export const APACHE_MODULES = '/usr/lib/apache2/modules'

export interface RunningApache {
  origin: string
  /** What Apache wrote to its error log so far. */
  errorLog: () => string
  stop: () => Promise<void>
}

/**
 * @param options.pages files under the document root, by path
 * @param options.modules `name_module file.so` pairs loaded after the base ones
 * @param options.config the rest of httpd.conf, given the directory and the origin
 * @param options.env the environment Apache reads `${NAME}` from (a secret stays out of every file)
 */
export async function startApache(options: { port: number; logLevel?: string; pages: Record<string, string>; modules: string[]; config: (origin: string) => string; env?: Record<string, string> }): Promise<RunningApache> {
  const dir = tempDir()
  const origin = `http://127.0.0.1:${options.port}`
  // (started as root, Apache serves as www-data, which must read the pages)
  chmodSync(dir, 0o755)
  for (const [path, content] of Object.entries(options.pages)) {
    mkdirSync(dirname(join(dir, 'htdocs', path)), { recursive: true })
    writeFileSync(join(dir, 'htdocs', path), content)
  }
  const root = process.getuid?.() === 0
  const base = ['mpm_prefork_module mod_mpm_prefork.so', 'authn_core_module mod_authn_core.so', 'authz_core_module mod_authz_core.so', 'authz_user_module mod_authz_user.so', 'dir_module mod_dir.so', 'mime_module mod_mime.so']
  writeFileSync(
    join(dir, 'httpd.conf'),
    `ServerRoot "${dir}"
ServerName 127.0.0.1
Listen 127.0.0.1:${options.port}
PidFile "${dir}/httpd.pid"
DefaultRuntimeDir "${dir}"
Mutex file:${dir} default
ErrorLog "${dir}/error.log"
LogLevel ${options.logLevel ?? 'warn'}
${root ? 'User www-data\nGroup www-data' : ''}
${[...base, ...options.modules].map((line) => { const [name, file] = line.split(' '); return `LoadModule ${name} ${APACHE_MODULES}/${file}` }).join('\n')}
TypesConfig /etc/mime.types
DocumentRoot "${dir}/htdocs"
DirectoryIndex index.html

${options.config(origin)}
`,
  )
  const child = Bun.spawn([APACHE, '-X', '-f', join(dir, 'httpd.conf')], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...options.env } })
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '')
  const deadline = Date.now() + 15_000
  for (;;) {
    // (Connection: close: Apache in -X stops only once a kept-alive connection has timed out)
    const up = await fetch(`${origin}/`, { redirect: 'manual', headers: { connection: 'close' } }).then(() => true, () => false)
    if (up) break
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Apache did not start: ${await new Response(child.stderr).text()} ${errorLog()}`)
    await Bun.sleep(50)
  }
  return {
    origin,
    errorLog,
    async stop() {
      child.kill('SIGTERM')
      const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(5_000).then(() => false)])
      if (!exited) child.kill('SIGKILL')
    },
  }
}
