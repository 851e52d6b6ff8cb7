// A group of a tenant (product spec §23): flat, a name unique in the tenant.
export interface Group {
  id: string
  tenantId: string
  /** 1-64 of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit; stored lower-case. */
  name: string
  description: string | null
  createdAt: number
  updatedAt: number
}

/** A user's membership of a group (a row of group_members). */
export interface GroupMembership {
  groupId: string
  userId: string
  tenantId: string
  createdAt: number
}

/** A group as the CLI and the admin API show it. */
export interface GroupView {
  groupId: string
  name: string
  description: string | null
  createdAt: string
}

export const toGroupView = (group: Group): GroupView => ({ groupId: group.id, name: group.name, description: group.description, createdAt: new Date(group.createdAt).toISOString() })
