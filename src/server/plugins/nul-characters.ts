// No NUL character reaches the database: PostgreSQL refuses one in any text value, and a query
// it refuses would be a 500. An id or filter in the URL (%00) and a string in a JSON body
// (\u0000) holding one are refused here with a 400, the same on both engines. No field authd
// takes has a use for one (names refuse control characters anyway, and a password with a NUL
// in it is refused rather than silently cut).
import { Elysia } from 'elysia'
import { badRequest } from '../../core/errors'

/** A URL as sent holds a NUL only as %00 (any case): a literal one cannot be sent. */
const NUL_IN_URL = /%00/i

export const refuseNulCharacters = () =>
  new Elysia({ name: 'nul-characters' }).onRequest(({ request }) => {
    if (NUL_IN_URL.test(request.url)) throw badRequest('The request URL holds a NUL character (%00)')
  })

/** JSON.parse's reviver for request bodies: a string holding a NUL is refused, naming its field. */
export function refuseNulInJson(key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.includes('\0')) throw badRequest(`${key || 'The request body'} must not contain a NUL character (\\u0000)`)
  return value
}
