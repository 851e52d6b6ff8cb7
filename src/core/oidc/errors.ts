// The OAuth 2.0 / OpenID Connect error values (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1,
// OpenID Connect Core §3.1.2.6), raised as domain errors. They are AppErrors, so anything the
// edge does not draw itself still gets a 4xx; the OpenID routes answer them in the protocol's
// own form ({error, error_description}, or a redirect to the client).
import { AppError } from '../errors'

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_token'
  | 'server_error'
  | 'temporarily_unavailable'

export class OAuthError extends AppError {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    status = 400,
  ) {
    super(status, status === 401 ? 'unauthorized' : 'invalid_request', description)
    this.name = 'OAuthError'
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description)
/** Every client-authentication failure is the same answer: which check failed is not said. */
export const invalidClient = () => new OAuthError('invalid_client', 'client authentication failed', 401)
/** Every failure of a code or refresh token is the same answer (unknown, spent, expired, another client's). */
export const invalidGrant = (description = 'grant request is invalid') => new OAuthError('invalid_grant', description)
export const invalidToken = () => new OAuthError('invalid_token', 'invalid token', 401)

/** A request to a protected resource with no token at all: RFC 6750 §3.1 has its challenge carry no error code. */
export class BearerRequired extends OAuthError {
  constructor() {
    super('invalid_token', 'an access token is required: send it as Authorization: Bearer', 401)
    this.name = 'BearerRequired'
  }
}
export const bearerRequired = () => new BearerRequired()
