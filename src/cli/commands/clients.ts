// `authd clients …`: the OpenID Connect clients of a tenant (product spec §21), through the
// same domain functions as the admin API. A confidential client's secret is printed once.
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import { createClient, deleteClient, listClients, rotateClientSecret, toClientView, updateClient, type ClientView } from '../../core/oidc/clients'
import { GROUPS_CLAIM_MODES, ID_TOKEN_ALGS, type GroupsClaim, type IdTokenAlg } from '../../core/oidc/types'
import { tenantPagesUrl } from '../../core/tenants/tenant-pages'
import { contextFrom } from '../context'
import { required, table, UsageError } from '../io'
import type { Env } from '../env'

/** A repeatable option: every --redirect-uri adds one. */
const collect = (value: string, previous: string[] = []) => [...previous, value]

const summary = (c: ClientView) =>
  (c.authMethod === 'private_key_jwt' ? 'private_key_jwt ' : '') +
  (c.service
    ? `service client ${c.name} (${c.clientId}), scopes ${c.scopes.join(' ') || '(none)'}, audiences ${c.audiences.join(', ') || "(the tenant's)"}, tokens for ${c.tokenLifetime} s`
    : `${c.type} client ${c.name} (${c.clientId}), redirect URIs ${c.redirectUris.join(', ') || '(none)'}${c.firstParty ? ', first-party' : ''}, ID tokens ${c.idTokenAlg}` +
  `${c.allowedGroups ? `, only for members of ${c.allowedGroups.join(', ')}` : ''}${c.groupsClaim === 'always' ? ', groups claim always' : ''}${c.device ? ', device grant' : ''}`)

const ALLOWED_GROUPS_HELP = 'only members of at least one of these groups (names, comma-separated) get a code; "" admits anyone again'
const GROUPS_CLAIM_HELP = 'scope: the groups claim for the scope "groups" only (the default); always: in every ID token and userinfo'

const SCOPES_HELP = 'a service client: the scopes it may ask for, comma-separated ("" for none)'
const AUDIENCE_HELP = "an audience (RFC 8707 resource) its tokens may name besides the tenant's, and whose tokens it may introspect (repeat for several)"
const TOKEN_LIFETIME_HELP = "a service client: its access tokens' lifetime, such as 15m (the default), 900 or 1h"

const JWKS_FILE_HELP = 'a JSON file of the public keys (a JWKS) with which the client signs its assertions: it authenticates with private_key_jwt and gets no secret'

/** --jwks-file: the set as JSON (checked by the domain, which says what is wrong with a key). */
function jwksFileOption(path: string | undefined): unknown {
  if (path === undefined) return undefined
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--jwks-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new UsageError(`--jwks-file: ${path} is not JSON (a JWKS is {"keys": [...]})`)
  }
}

/** --scopes a,b: the scopes; "" none. */
const scopesOption = (value: string | undefined): string[] | undefined => (value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter((s) => s !== ''))

/** --allowed-groups a,b: the names; "" clears (anyone may use the client). */
const allowedGroupsOption = (value: string | undefined): string[] | null | undefined =>
  value === undefined ? undefined : value.trim() === '' ? null : value.split(',').map((name) => name.trim()).filter((name) => name !== '')

function groupsClaimOption(value: string | undefined): GroupsClaim | undefined {
  if (value === undefined) return undefined
  if (!GROUPS_CLAIM_MODES.includes(value as GroupsClaim)) throw new UsageError(`--groups-claim must be ${GROUPS_CLAIM_MODES.join(' or ')}, not ${JSON.stringify(value)}`)
  return value as GroupsClaim
}

const ID_TOKEN_ALG_HELP = 'how its ID tokens are signed: RS256 (the default, which every relying party accepts) or ES256'

/** --id-token-alg, checked here so the error names the flag (`es256` is taken for ES256: a typed flag, not a JOSE header). */
function idTokenAlgOption(value: string | undefined): IdTokenAlg | undefined {
  if (value === undefined) return undefined
  const alg = value.toUpperCase() as IdTokenAlg
  if (!ID_TOKEN_ALGS.includes(alg)) throw new UsageError(`--id-token-alg must be ${ID_TOKEN_ALGS.join(' or ')}, not ${JSON.stringify(value)}`)
  return alg
}

type CreateOptions = { tenant?: string; name?: string; redirectUri?: string[]; postLogoutRedirectUri?: string[]; public?: boolean; firstParty?: boolean; idTokenAlg?: string; allowedGroups?: string; groupsClaim?: string; service?: boolean; scopes?: string; audience?: string[]; tokenLifetime?: string; device?: boolean; jwksFile?: string }
type UpdateOptions = { name?: string; redirectUri?: string[]; postLogoutRedirectUri?: string[]; firstParty?: boolean; thirdParty?: boolean; idTokenAlg?: string; allowedGroups?: string; groupsClaim?: string; scopes?: string; audience?: string[]; audiences?: boolean; tokenLifetime?: string; jwksFile?: string }

export function registerClients(program: Command, env: Env) {
  const clients = program.command('clients').description('OpenID Connect clients: applications that sign their users in with authd')

  clients
    .command('create')
    .description('register a client; a confidential client’s secret is printed once and never again')
    .option('--tenant <tenantId>', 'the tenant whose issuer the client uses')
    .option('--name <name>', 'the name users see on the consent page')
    .option('--redirect-uri <uri>', 'a redirect URI, matched exactly (repeat for several)', collect)
    .option('--post-logout-redirect-uri <uri>', 'where end_session may send the browser back to (repeat for several)', collect)
    .option('--public', 'a public client (single-page or native app): no secret, PKCE only')
    .option('--first-party', 'the operator’s own application: no consent page')
    .option('--id-token-alg <alg>', ID_TOKEN_ALG_HELP)
    .option('--allowed-groups <names>', ALLOWED_GROUPS_HELP)
    .option('--groups-claim <mode>', GROUPS_CLAIM_HELP)
    .option('--service', 'a service client (a machine, no users): the client_credentials grant only, no redirect URIs')
    .option('--scopes <scopes>', SCOPES_HELP)
    .option('--audience <uri>', AUDIENCE_HELP, collect)
    .option('--token-lifetime <duration>', TOKEN_LIFETIME_HELP)
    .option('--device', 'may use the device authorization grant (RFC 8628: a CLI tool or TV signs a person in at /t/{tenant}/device); --redirect-uri then optional')
    .option('--jwks-file <path>', JWKS_FILE_HELP)
    .action(async (opts: CreateOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const idTokenAlg = idTokenAlgOption(opts.idTokenAlg)
      const groupsClaim = groupsClaimOption(opts.groupsClaim)
      const allowedGroups = allowedGroupsOption(opts.allowedGroups)
      // (an empty list at creation is most likely an empty variable in a script: it would fail open)
      if (allowedGroups === null) throw new UsageError('--allowed-groups must name at least one group (leave it out for a client anyone may use)')
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const name = await required(ctx.out, opts.name, '--name', 'Client name')
      if (opts.service && opts.redirectUri?.length) throw new UsageError('a --service client has no --redirect-uri: it uses the client_credentials grant only')
      if (opts.service && opts.device) throw new UsageError('a --service client cannot be a --device client: the device grant signs a person in')
      if (!opts.service && !opts.device && !opts.redirectUri?.length) throw new UsageError('give at least one --redirect-uri (or --service for a machine client, --device for a device client)')
      if (opts.public && opts.jwksFile !== undefined) throw new UsageError('a --public client has no keys: --jwks-file is for a confidential client')
      const jwks = jwksFileOption(opts.jwksFile)
      const created = await ctx.withRuntime(async (rt) => {
        const service = opts.service === true ? { service: true, scopes: scopesOption(opts.scopes), tokenLifetime: opts.tokenLifetime } : { scopes: scopesOption(opts.scopes), tokenLifetime: opts.tokenLifetime }
        const { client, clientSecret } = await createClient(rt, tenantId, { name, redirectUris: opts.redirectUri, postLogoutRedirectUris: opts.postLogoutRedirectUri, public: opts.public === true, firstParty: opts.firstParty === true, idTokenAlg, allowedGroups, groupsClaim, audiences: opts.audience, device: opts.device === true, jwks, ...service })
        const tenant = (await rt.store.tenants.get(tenantId))!
        return { client: toClientView(client), clientSecret, issuer: tenantPagesUrl(rt.config, tenant) }
      })
      ctx.linkWritten()
      ctx.out.result(created, () => [
        `created ${summary(created.client)}`,
        `issuer: ${created.issuer}`,
        `client_id: ${created.client.clientId}`,
        ...(created.clientSecret ? [`client_secret: ${created.clientSecret}`, 'Store it now: it is not shown again.'] : []),
        ...(created.client.authMethod === 'private_key_jwt' ? [`authenticates with private_key_jwt: assertions signed by one of its ${created.client.jwks!.keys.length} key(s), aud ${created.issuer}`] : []),
      ])
    })

  clients
    .command('list')
    .description('list a tenant’s clients (never their secrets)')
    .option('--tenant <tenantId>', 'the tenant')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const tenantId = await required(ctx.out, opts.tenant, '--tenant', 'Tenant ID')
      const rows = (await ctx.withRuntime((rt) => listClients(rt, tenantId))).map(toClientView)
      ctx.out.result(rows, () => table(rows.map((r) => ({ ...r, allowedGroups: r.allowedGroups?.join(',') ?? '', redirectUris: r.redirectUris.join(' ') })), ['clientId', 'name', 'type', 'service', 'device', 'firstParty', 'idTokenAlg', 'allowedGroups', 'redirectUris', 'createdAt']))
    })

  clients
    .command('update <clientId>')
    .description('change a client: each list given replaces the one it had')
    .option('--name <name>', 'the name users see')
    .option('--redirect-uri <uri>', 'a redirect URI (repeat for several)', collect)
    .option('--post-logout-redirect-uri <uri>', 'a post-logout redirect URI (repeat for several)', collect)
    .option('--first-party', 'no consent page from now on')
    .option('--third-party', 'users consent on first use from now on')
    .option('--id-token-alg <alg>', ID_TOKEN_ALG_HELP)
    .option('--allowed-groups <names>', ALLOWED_GROUPS_HELP)
    .option('--groups-claim <mode>', GROUPS_CLAIM_HELP)
    .option('--scopes <scopes>', SCOPES_HELP)
    .option('--audience <uri>', `${AUDIENCE_HELP}; the list given replaces the old one`, collect)
    .option('--no-audiences', 'no audiences besides the tenant’s from now on')
    .option('--token-lifetime <duration>', TOKEN_LIFETIME_HELP)
    .option('--jwks-file <path>', 'a private_key_jwt client: its public keys from now on (the set replaces the old one at once: to rotate, give both keys, then the new one alone)')
    .action(async (clientId: string, opts: UpdateOptions, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      if (opts.firstParty && opts.thirdParty) throw new UsageError('give --first-party or --third-party, not both')
      if (opts.audience && opts.audiences === false) throw new UsageError('give --audience or --no-audiences, not both')
      // (--no-audiences sets audiences to false; commander leaves it true, its default, otherwise)
      const audiences = opts.audiences === false ? [] : opts.audience
      if (Object.entries(opts).every(([k, v]) => v === undefined || k === 'audiences') && audiences === undefined) {
        throw new UsageError('nothing to change: give --name, --redirect-uri, --post-logout-redirect-uri, --first-party, --third-party, --id-token-alg, --allowed-groups, --groups-claim, --scopes, --audience, --no-audiences --token-lifetime or --jwks-file')
      }
      const idTokenAlg = idTokenAlgOption(opts.idTokenAlg)
      const groupsClaim = groupsClaimOption(opts.groupsClaim)
      const allowedGroups = allowedGroupsOption(opts.allowedGroups)
      const firstParty = opts.firstParty ? true : opts.thirdParty ? false : undefined
      const updated = toClientView(await ctx.withRuntime((rt) => updateClient(rt, clientId, { name: opts.name, redirectUris: opts.redirectUri, postLogoutRedirectUris: opts.postLogoutRedirectUri, firstParty, idTokenAlg, allowedGroups, groupsClaim, scopes: scopesOption(opts.scopes), audiences, tokenLifetime: opts.tokenLifetime, jwks: jwksFileOption(opts.jwksFile) })))
      ctx.out.result(updated, () => `updated ${summary(updated)}`)
    })

  clients
    .command('rotate-secret <clientId>')
    .description('replace a confidential client’s secret; the old one stops working at once')
    .action(async (clientId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      const { client, clientSecret } = await ctx.withRuntime((rt) => rotateClientSecret(rt, clientId))
      ctx.out.result({ clientId: client.id, clientSecret }, () => [`new secret for client ${client.name} (${client.id})`, `client_secret: ${clientSecret}`, 'Store it now: it is not shown again.'])
    })

  clients
    .command('delete <clientId>')
    .description('delete a client: its grants are revoked, its consents forgotten')
    .action(async (clientId: string, _: unknown, cmd: Command) => {
      const ctx = contextFrom(cmd, env)
      await ctx.withRuntime((rt) => deleteClient(rt, clientId))
      ctx.out.result({ clientId }, () => `deleted client ${clientId}`)
    })
}
