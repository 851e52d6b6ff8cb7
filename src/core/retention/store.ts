// The storage contract of what retention deletes: composed into Store (core/store.ts), implemented by
// each engine in src/db.

/** Kinds of rows that retention deletes (core/retention.ts). */
export type PruneTarget = 'auditEvents' | 'refreshTokens' | 'refreshFamilies' | 'sentMail' | 'resetRequests' | 'otps' | 'setupTokens' | 'limitCounters' | 'idempotencyKeys' | 'pendingSignups' | 'signupRequests' | 'mfaChallenges' | 'webauthnChallenges' | 'oidcCodes' | 'deviceAuthorizations' | 'clientAssertions' | 'webhookDeliveries' | 'webhookEvents' | 'deliveredWebhookEvents' | 'federationFlows'
