// `authd users import`: seeds users from a JSON array or a CSV file with the header
// email,firstName,lastName[,type][,password][,groups]. Every row is validated (and its password
// checked against the policy, its groups looked up) before anything is written; then all rows
// go in at once with their memberships, or none. Addresses already in the tenant are skipped,
// so an import can be re-run.
import { parse as parseCsv } from 'csv-parse/sync'
import { audit, CLI_ACTOR, type Actor } from '../audit/audit'
import type { Deps } from '../deps'
import { AppError, badRequest, conflict } from '../errors'
import { MAX_GROUPS_PER_USER, validateGroupName } from '../groups/groups'
import type { Group, GroupMembership } from '../groups/types'
import { getTenant } from '../tenants/tenants'
import type { SetupToken, User } from '../types'
import { prepareUser } from './users'
import { normaliseEmail } from '../names'

export interface ImportResult {
  created: Array<{ userId: string; email: string; type: string; groups?: string[]; setupToken?: string; setupTokenExpiresAt?: number }>
  skipped: Array<{ email: string; reason: string }>
}

const FIELDS = ['email', 'firstName', 'lastName', 'type', 'password', 'groups'] as const
const MAX_REPORTED_ERRORS = 20

/** The rows of a JSON array or a CSV document (told apart by the first character). */
export function parseImportFile(text: string): Record<string, unknown>[] {
  const trimmed = text.replace(/^\uFEFF/, '').trim()
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let rows: unknown
    try {
      rows = JSON.parse(trimmed)
    } catch (error) {
      throw badRequest(`the file is not valid JSON: ${(error as Error).message}`)
    }
    if (!Array.isArray(rows)) throw badRequest('a JSON import must be an array of users')
    return rows.map((row, i) => {
      if (typeof row !== 'object' || row === null || Array.isArray(row)) throw badRequest(`row ${i + 1}: must be an object`)
      return row as Record<string, unknown>
    })
  }
  try {
    const rows = parseCsv(trimmed, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, string>[]
    // An empty CSV cell means "not given" (no type, no password).
    return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== '')))
  } catch (error) {
    throw badRequest(`the file is not valid CSV: ${(error as Error).message}`)
  }
}

/** A row's groups: names separated by `|` (in JSON, an array of names too), each one of the tenant's. */
function groupsOfRow(raw: unknown, tenantGroups: Map<string, Group>): Group[] {
  if (raw === undefined) return []
  const names = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split('|') : null
  if (names === null || !names.every((name) => typeof name === 'string')) throw badRequest('groups must be names separated by |')
  const wanted = [...new Set(names.map((name) => name.trim()).filter((name) => name !== '').map(validateGroupName))]
  if (wanted.length > MAX_GROUPS_PER_USER) throw badRequest(`groups: at most ${MAX_GROUPS_PER_USER} per user`)
  return wanted.map((name) => tenantGroups.get(name) ?? unknownGroup(name))
}

function unknownGroup(name: string): never {
  throw badRequest(`no group named ${name} in the tenant`)
}

export async function importUsers(
  deps: Pick<Deps, 'store' | 'clock' | 'config' | 'hasher'>,
  tenantId: string,
  rows: Record<string, unknown>[],
  actor: Actor = CLI_ACTOR,
): Promise<ImportResult> {
  const tenant = await getTenant(deps, tenantId)
  const errors: string[] = []
  const seen = new Set<string>()
  const result: ImportResult = { created: [], skipped: [] }
  const prepared: Array<Awaited<ReturnType<typeof prepareUser>> & { groups: Group[] }> = []
  // (read once: the groups named are checked against the tenant's as the rows are)
  const tenantGroups = new Map(rows.some((row) => row.groups !== undefined) ? (await deps.store.groups.list(tenant.id)).map((g) => [g.name, g]) : [])

  const validate = async (row: Record<string, unknown>, n: number) => {
    const unknown = Object.keys(row).filter((k) => !(FIELDS as readonly string[]).includes(k))
    if (unknown.length > 0) throw badRequest(`unknown field ${unknown.join(', ')}`)
    for (const field of FIELDS) {
      if (field !== 'groups' && row[field] !== undefined && typeof row[field] !== 'string') throw badRequest(`${field} must be a string`)
    }
    const email = normaliseEmail(row.email)
    if (seen.has(email)) throw badRequest(`${email} appears more than once in the file`)
    seen.add(email)
    // (an unknown group fails the import even on a row that is skipped: the file is wrong)
    const groups = groupsOfRow(row.groups, tenantGroups)
    if (await deps.store.users.findByEmail(tenant.id, email)) return result.skipped.push({ email, reason: 'already exists' })
    prepared[n] = { ...(await prepareUser(deps, tenant, row as { email: string; firstName: string; lastName: string; type?: string; password?: string })), groups }
  }
  // Bounded by the hasher's concurrency: rows with passwords each cost one argon2id hash.
  for (let start = 0; start < rows.length; start += deps.config.hashConcurrency) {
    const batch = rows.slice(start, start + deps.config.hashConcurrency)
    await Promise.all(
      batch.map((row, i) =>
        validate(row, start + i).catch((error) => {
          if (!(error instanceof AppError)) throw error
          errors[start + i] = `row ${start + i + 1}: ${error.message}`
        }),
      ),
    )
  }
  const problems = errors.filter(Boolean)
  if (problems.length > 0) {
    const more = problems.length > MAX_REPORTED_ERRORS ? `; and ${problems.length - MAX_REPORTED_ERRORS} more` : ''
    throw badRequest(`nothing imported, ${problems.length} invalid row(s): ${problems.slice(0, MAX_REPORTED_ERRORS).join('; ')}${more}`)
  }

  const users: User[] = []
  const tokens: SetupToken[] = []
  const memberships: GroupMembership[] = []
  for (const entry of prepared.filter(Boolean)) {
    users.push(entry.user)
    if (entry.setupToken) tokens.push(entry.setupToken.record)
    for (const group of entry.groups) memberships.push({ groupId: group.id, userId: entry.user.id, tenantId: tenant.id, createdAt: entry.user.createdAt })
    result.created.push({
      userId: entry.user.id,
      email: entry.user.email,
      type: entry.user.type,
      ...(entry.groups.length > 0 && { groups: entry.groups.map((g) => g.name).sort() }),
      ...(entry.setupToken && { setupToken: entry.setupToken.token, setupTokenExpiresAt: entry.setupToken.record.expiresAt }),
    })
  }
  // Someone may have added one of these addresses since we looked: all or nothing still holds.
  if (!(await deps.store.users.insertMany(users, tokens, memberships))) {
    throw conflict('nothing imported: an address in the file was added to the tenant while importing; run the import again')
  }
  await audit(deps, 'users.imported', actor, { tenantId, detail: { created: result.created.length, skipped: result.skipped.length, ...(memberships.length > 0 && { memberships: memberships.length }) } })
  return result
}
