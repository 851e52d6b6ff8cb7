// What an upstream sign-in's failure is, as the person is told it (pages/federation.ts).
/**
 * Why an upstream sign-in could not go on, as the person is told it:
 *   refused       the upstream answered the redirect with an `error` (shown escaped)
 *   unreachable   no answer, or none in time
 *   failed        an answer that is no success (the exchange refused, a 5xx, a broken document)
 *   mismatch      the answer is not for this flow: its state or iss differs
 *   invalid       the answer does not hold up: an ID token that fails its checks
 */
export type UpstreamFailureKind = 'refused' | 'unreachable' | 'failed' | 'mismatch' | 'invalid'

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    /** What the upstream said (refused: its `error` code), for the page and the log; never a secret. */
    readonly upstreamError: string | null = null,
  ) {
    super(`upstream ${kind}${upstreamError ? `: ${upstreamError}` : ''}`)
  }
}
