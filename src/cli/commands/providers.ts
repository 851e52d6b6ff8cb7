// `authd providers …`: a tenant's upstream identity providers (product spec §25), through the
// same domain functions as /api/v1/admin/providers. The client secret is read from standard
// input (or typed, unseen, on a terminal), never from an argument a process list would show,
// and is never printed.
import type { Command } from 'commander'
import { createProvider, deleteProvider, getProvider, listProviders, providerWithIdentities, toProviderView, updateProvider, type ProviderInput, type ProviderView } from '../../core/federation/providers'
import { LINK_BY_EMAIL, PROVIDER_TYPES } from '../../core/federation/types'
import { contextFrom } from '../context'
import { confirmOrStop, interactive, promptSecret, readSecretFromStdin, required, table, UsageError, type Output } from '../io'
import type { Env } from '../env'

const collect = (value: string, previous: string[] = []) => [...previous, value]
const COLUMNS = ['providerId', 'name', 'type', 'issuer', 'clientId', 'linkByEmail', 'createUsers']

interface SettingOptions {
  name?: string
  issuer?: string
  entraTenant?: string
  clientId?: string
  clientSecretStdin?: boolean
  scopes?: string
  linkByEmail?: string
  createUsers?: string
  trustUpstreamMfa?: boolean
  groupsClaim?: string
  mapGroup?: string[]
}

/** --map-group up=local…: the whole map; '' alone clears it. The local name has no "=", so the upstream one may. */
function groupMapOption(values: string[] | undefined): Record<string, string> | null | undefined {
  if (values === undefined) return undefined
  if (values.length === 1 && values[0]!.trim() === '') return null
  const map: Record<string, string> = {}
  for (const value of values) {
    const at = value.lastIndexOf('=')
    if (at < 1 || at === value.length - 1) throw new UsageError(`--map-group must be upstream-group=local-group, not ${JSON.stringify(value)}`)
    const upstream = value.slice(0, at)
    if (Object.hasOwn(map, upstream)) throw new UsageError(`--map-group maps ${JSON.stringify(upstream)} twice`)
    map[upstream] = value.slice(at + 1)
  }
  return map
}

/** '' given to an option that may be cleared: null (back to none, or the default). */
const orNull = (value: string | undefined) => (value === undefined ? undefined : value === '' ? null : value)

/** The settings the options give, in the admin API's words; the secret read as they say. */
async function settingsOf(out: Output, opts: SettingOptions, secret: 'required' | 'optional'): Promise<ProviderInput> {
  const groupMap = groupMapOption(opts.mapGroup)
  let clientSecret: string | undefined
  if (opts.clientSecretStdin) clientSecret = await readSecretFromStdin('--client-secret-stdin')
  else if (secret === 'required') {
    if (!interactive(out)) throw new UsageError('missing --client-secret-stdin (the client secret is read from standard input)')
    clientSecret = await promptSecret('Client secret (as the upstream issued it)')
  }
  return {
    name: opts.name,
    issuer: orNull(opts.issuer),
    entraTenant: opts.entraTenant,
    clientId: opts.clientId,
    clientSecret,
    scopes: opts.scopes,
    linkByEmail: opts.linkByEmail,
    createUsers: orNull(opts.createUsers),
    trustUpstreamMfa: opts.trustUpstreamMfa,
    groupsClaim: orNull(opts.groupsClaim),
    groupMap,
  }
}

const identitiesOf = (n: number) => `${n} ${n === 1 ? 'identity' : 'identities'}`
const summary = (p: ProviderView) => `${p.type} provider ${p.name} (${p.providerId})`

/** How the provider signs people in, beyond the table's columns. */
const details = (p: ProviderView) => [
  `scopes: ${p.scopes}`,
  `link by e-mail: ${p.linkByEmail}; create users: ${p.createUsers ?? "the tenant's sign-up policy"}; trust upstream MFA: ${p.trustUpstreamMfa ? 'yes' : 'no'}`,
  ...(p.groupsClaim ? [`groups claim: ${p.groupsClaim}`, ...Object.entries(p.groupMap).map(([upstream, local]) => `  ${upstream} -> ${local}`)] : []),
]

/** The options create and update share (update adds --no-trust-upstream-mfa, and '' clears). */
function settingOptions(command: Command, clears: boolean): Command {
  const clear = (what: string) => (clears ? `; '' ${what}` : '')
  return command
    .option('--name <name>', `the name on the login page's button ("Continue with {name}"); default the preset's, required for oidc`)
    .option('--issuer <url>', `oidc (required) and gitlab (default https://gitlab.com): the issuer; github: a GitHub Enterprise Server's base URL${clear('is github.com again')}`)
    .option('--entra-tenant <tenant>', 'microsoft (required): organizations, common, or a Microsoft Entra tenant id')
    .option('--client-id <id>', 'the client id the upstream issued')
    .option('--client-secret-stdin', clears ? 'replace the client secret with one read from standard input' : 'read the client secret from standard input')
    .option('--scopes <scopes>', 'space-separated (default "openid email profile"; github "read:user user:email")')
    .option('--link-by-email <mode>', `${LINK_BY_EMAIL.join(' or ')}: link an unknown identity to the user of its address without asking when both sides hold it as verified (default verified for google, microsoft and gitlab)`)
    .option('--create-users <policy>', `open, closed or domains:a.example,…: for whom an unknown identity may create an account (default: the tenant's sign-up policy${clear('restores it')})`)
    .option('--trust-upstream-mfa', "let the ID token's amr (mfa, otp, hwk) stand in for the user's own second factor")
    .option('--groups-claim <claim>', `the claim that lists the person's upstream groups${clear('stops syncing')}`)
    .option('--map-group <upstream=local>', `set the local group from the upstream one at each sign-in (repeat; replaces the whole map${clear('alone clears it')})`, collect)
}

export function registerProviders(program: Command, env: Env) {
  const providers = program.command('providers').description("a tenant's upstream identity providers: sign in with Google, Microsoft, GitLab, GitHub or any OpenID Provider")

  settingOptions(
    providers
      .command('create')
      .description('add a provider; prints the redirect URI to register upstream (the client secret is stored sealed and never shown)')
      .option('--tenant <tenantId>', 'the tenant whose login page gets the provider')
      .option('--type <type>', PROVIDER_TYPES.join(', ')),
    false,
  ).action(async (opts: SettingOptions & { tenant?: string; type?: string }, cmd: Command) => {
    const ctx = contextFrom(cmd, env)
    const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
    const type = await required(ctx.out, opts.type, '--type', `Type (${PROVIDER_TYPES.join(', ')})`)
    const clientId = await required(ctx.out, opts.clientId, '--client-id', 'Client ID')
    const settings = await settingsOf(ctx.out, { ...opts, clientId }, 'required')
    const { provider } = await ctx.withRuntime((rt) => createProvider(rt, tenantId, { ...settings, type }))
    ctx.linkWritten()
    ctx.out.result(provider, () => [`created ${summary(provider)} in tenant ${tenantId}`, `issuer: ${provider.issuer ?? 'github.com'}`, ...details(provider), `Register this redirect URI upstream: ${provider.redirectUri}`])
  })

  providers
    .command('list')
    .description("a tenant's providers by name (never their secrets)")
    .option('--tenant <tenantId>', 'the tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const rows = await ctx.withRuntime(async (rt) => (await listProviders(rt, tenantId)).map((p) => toProviderView(rt.config, p)))
      // (the table leaves the redirect URIs out; the JSON has them)
      if (ctx.out.json && rows.length > 0) ctx.linkWritten()
      ctx.out.result(rows, () => table(rows.map((r) => ({ ...r })), COLUMNS))
    })

  providers
    .command('show <providerId>')
    .description('one provider: its settings and the redirect URI to register upstream')
    .action(async (providerId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const provider = await ctx.withRuntime(async (rt) => toProviderView(rt.config, await getProvider(rt, providerId)))
      ctx.linkWritten()
      ctx.out.result(provider, () => [...table([{ ...provider }], COLUMNS), ...details(provider), `redirect URI: ${provider.redirectUri}`])
    })

  settingOptions(providers.command('update <providerId>').description('change a provider: what is given replaces what was; the type never changes'), true)
    .option('--no-trust-upstream-mfa', 'the user passes their own second factor again')
    .action(async (providerId: string, opts: SettingOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (Object.values(opts).every((value) => value === undefined)) {
        throw new UsageError('nothing to change: give --name, --issuer, --entra-tenant, --client-id, --client-secret-stdin, --scopes, --link-by-email, --create-users, --[no-]trust-upstream-mfa, --groups-claim or --map-group')
      }
      const settings = await settingsOf(ctx.out, opts, 'optional')
      const provider = await ctx.withRuntime((rt) => updateProvider(rt, providerId, settings))
      if (ctx.out.json) ctx.linkWritten()
      ctx.out.result(provider, () => `updated ${summary(provider)}${opts.clientSecretStdin ? ' (client secret replaced)' : ''}`)
    })

  providers
    .command('delete <providerId>')
    .description('delete a provider and every identity linked through it (their users stay); asks first unless --yes')
    .option('-y, --yes', 'delete without asking')
    .action(async (providerId: string, opts: { yes?: boolean }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (!opts.yes) {
        const { provider, identities } = await ctx.withRuntime((rt) => providerWithIdentities(rt, providerId))
        const going = identities === 0 ? '' : ` and the ${identitiesOf(identities)} linked through it (their users stay)`
        await confirmOrStop(ctx.out, `Delete provider ${provider.name} (${provider.type})${going}?`, `deleting provider ${provider.name}${going ? ` deletes${going.slice(4)} too` : ' cannot be undone'}: give --yes to confirm`)
      }
      const deleted = await ctx.withRuntime((rt) => deleteProvider(rt, providerId))
      ctx.out.result(deleted, () => `deleted provider ${deleted.providerId} and the ${identitiesOf(deleted.identitiesDeleted)} linked through it`)
    })
}
