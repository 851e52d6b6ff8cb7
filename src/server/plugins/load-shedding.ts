// Under a login flood most logins are refused (503, core/passwords.ts). The refusal is decided
// by the hashing queue alone, so it is made as soon as the request arrives, before its cookies,
// body and API key are read: a refused login then costs the event loop a fraction of a
// request, and the cheap routes stay fast. The login itself checks again (the authority); this
// is the same check, made earlier.
import { Elysia } from 'elysia'
import type { Deps } from '../../core/deps'

export const loginShedding = (deps: Pick<Deps, 'hasher'>, loginPath: string) =>
  new Elysia({ name: 'login-shedding' }).onRequest(({ request }) => {
    if (request.method === 'POST' && isPath(request.url, loginPath)) deps.hasher.assertCapacity()
  })

/** Whether an absolute URL's path is exactly `path` (a query may follow), without parsing the URL. */
export function isPath(url: string, path: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1 || !url.startsWith(path, start)) return false
  const end = start + path.length
  return end === url.length || url[end] === '?'
}
