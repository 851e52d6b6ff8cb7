// The storage contract of the audit log: composed into Store (core/store.ts), implemented by
// each engine in src/db.
import type { AuditEvent } from '../types'

export interface AuditQuery {
  tenantId?: string
  userId?: string
  type?: string
  since?: number
  limit?: number
}

export interface AuditStore {
  record(event: AuditEvent): Promise<void>
  /** Several events in one transaction. */
  recordMany(events: AuditEvent[]): Promise<void>
  /** Newest first. */
  query(filter: AuditQuery): Promise<Array<AuditEvent & { id: number }>>
}
