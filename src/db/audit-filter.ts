// The audit log's filter (`authd audit`), one definition for both engines: drizzle's operators
// take either dialect's columns.
import { and, eq, gte, sql, type Column, type SQL } from 'drizzle-orm'
import type { AuditQuery } from '../core/audit/store'

export function auditFilter(columns: { tenantId: Column; userId: Column; type: Column; at: Column }, { tenantId, userId, type, since }: AuditQuery): SQL | undefined {
  const conditions: SQL[] = []
  if (tenantId) conditions.push(eq(columns.tenantId, tenantId))
  if (userId) conditions.push(eq(columns.userId, userId))
  // `login.*` selects a family of event types.
  // (the family's own `_` and `%` are letters, not wildcards: `webhook_endpoint.*` is that family only)
  if (type) conditions.push(type.endsWith('.*') ? sql`${columns.type} LIKE ${type.slice(0, -1).replace(/[\\%_]/g, '\\$&') + '%'} ESCAPE '\\'` : eq(columns.type, type))
  if (since !== undefined) conditions.push(gte(columns.at, since))
  return conditions.length > 0 ? and(...conditions) : undefined
}
