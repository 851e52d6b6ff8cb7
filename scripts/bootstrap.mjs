// Runs under plain Node before anything else (`npm start`, `npm test`): installs the locked
// dependencies, Bun included (it is a pinned devDependency), when they are missing or older
// than package-lock.json. Uses only Node built-ins, since nothing else is there yet.
import { execSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'

const installed = 'node_modules/.package-lock.json'
const bun = process.platform === 'win32' ? 'node_modules/.bin/bun.exe' : 'node_modules/.bin/bun'
const stale = !existsSync(installed) || !existsSync(bun) || statSync(installed).mtimeMs < statSync('package-lock.json').mtimeMs

if (stale) {
  console.error('authd: installing the locked dependencies (Bun included) with npm ci ...')
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' })
}
