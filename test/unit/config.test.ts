import { describe, expect, it } from 'bun:test'
import { ConfigError, loadConfig, parseDuration, SETTINGS } from '../../src/config'

describe('loadConfig', () => {
  it('runs with nothing set: the defaults of the product spec', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:3000',
      issuer: 'http://127.0.0.1:3000',
      accessTokenTtlSec: 900,
      refreshTtlSec: 86400,
      refreshRememberTtlSec: 30 * 86400,
      sessionMaxAgeSec: 90 * 86400,
      refreshGraceSec: 10,
      setupTokenTtlSec: 72 * 3600,
      passwordMinLength: 15,
      corsOrigins: [],
      maxBodyBytes: 16384,
    })
    expect(config.databasePath).toEndWith('/data/authd.db')
  })

  it('flags override the environment', () => {
    const config = loadConfig({ AUTHD_PORT: '4000', AUTHD_HOST: '0.0.0.0' }, { port: 5000 })
    expect(config.port).toBe(5000)
    expect(config.host).toBe('0.0.0.0')
  })

  it.each([
    ['sqlite:/var/lib/authd/auth.db', '/var/lib/authd/auth.db'],
    ['file:///var/lib/authd/auth.db', '/var/lib/authd/auth.db'],
    ['/srv/auth.db', '/srv/auth.db'],
  ])('AUTHD_DATABASE_URL %s is the SQLite file %s', (url, path) => {
    expect(loadConfig({ AUTHD_DATABASE_URL: url }).databasePath).toBe(path)
  })

  it('normalises CORS origins and refuses anything that is not an origin', () => {
    expect(loadConfig({ AUTHD_CORS_ORIGINS: 'https://a.example.com/, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ])
    expect(() => loadConfig({ AUTHD_CORS_ORIGINS: 'https://a.example.com/app' })).toThrow(ConfigError)
    expect(() => loadConfig({ AUTHD_CORS_ORIGINS: '*' })).toThrow(ConfigError)
  })

  it('refuses AUTHD_AUDIENCE, replaced by one audience per tenant, saying what to do', () => {
    expect(() => loadConfig({ AUTHD_AUDIENCE: 'authd' })).toThrow('authd tenants update ID --audience')
  })

  it.each([
    ['AUTHD_PORT', '70000'],
    ['AUTHD_PORT', 'http'],
    ['AUTHD_PASSWORD_MIN_LENGTH', '6'],
    ['AUTHD_REFRESH_GRACE', '0'],
    ['AUTHD_REFRESH_TOKEN_FORMAT', 'random'],
    ['AUTHD_PUBLIC_URL', 'not a url'],
  ])('refuses %s=%s with a ConfigError naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} `))
  })
})

describe('parseDuration', () => {
  it.each([
    ['900', 900],
    ['900s', 900],
    ['15m', 900],
    ['72h', 259200],
    ['30d', 2592000],
  ])('%s is %d seconds', (raw, seconds) => expect(parseDuration('X', raw)).toBe(seconds))
})

describe('the README and the reference it points to', () => {
  it('documents every AUTHD_* variable the configuration reads', async () => {
    // The configuration table (docs/configuration.md) lists them; AUTHD_ENV_FILE is explained where
    // --env-file is (docs/operations.md).
    const pages = ['README.md', 'docs/configuration.md', 'docs/operations.md', 'docs/cli.md', 'docs/api.md', 'docs/webhooks.md', 'docs/pages.md', 'docs/development.md']
    const readme = (await Promise.all(pages.map((page) => Bun.file(new URL(`../../${page}`, import.meta.url)).text()))).join('\n')
    expect(SETTINGS.length).toBeGreaterThan(30)
    expect(SETTINGS.filter((name) => !readme.includes(`\`${name}\``))).toEqual([])
  })
})
