// Access rules (product spec §24): per tenant, ordered, the first whose domain, path and method
// match a request decides; no match is a denial.

/** What a matched rule asks of the request: nothing, a session, a session with a second factor, or no entry. */
export const ACCESS_POLICIES = ['bypass', 'one_factor', 'two_factor', 'deny'] as const
export type AccessPolicy = (typeof ACCESS_POLICIES)[number]

export interface AccessRule {
  id: string
  tenantId: string
  /** 1 for the first rule of the tenant; the order the rules are asked in. */
  position: number
  /** A host (`app.example.com`) or every host under a domain (`*.example.com`), lower-case. */
  domain: string
  /** Path prefixes, any of which matches (none: every path). */
  paths: string[]
  /** Methods in upper case, any of which matches (none: every method). */
  methods: string[]
  policy: AccessPolicy
  /** Group names (stored lower-case), any of which admits (none: any signed-in user). */
  groups: string[]
  createdAt: number
}
