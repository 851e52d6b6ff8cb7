// A JSON body that refuses the fields it does not name. Elysia normalises bodies (on by
// default, for the whole app): a field the schema lacks is dropped before validation, even
// under `additionalProperties: false`, so `POST /users {"role":"admin"}` quietly made a plain
// user. The check therefore runs on the body as parsed (a transform hook, before validation),
// and it reads the schema itself: a field added to the schema is accepted, nothing else.
import { t, type TSchema } from 'elysia'
import { badRequest } from '../../core/errors'

/** Field names in the message are cut here: they are what the client sent. */
const MAX_NAME = 64

/** TypeBox's TProperties (elysia does not re-export its name). */
type Properties = Parameters<typeof t.Object>[0]

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The path of the first field of `value` that `schema` does not name where it refuses others. */
export function unknownField(schema: TSchema, value: unknown, path = ''): { path: string; known: string[] } | undefined {
  if (schema.type === 'array' && schema.items && Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unknownField(schema.items as TSchema, item, `${path}${i}.`)
      if (found) return found
    }
    return undefined
  }
  if (schema.type !== 'object' || !isPlainObject(value)) return undefined
  const properties = (schema.properties ?? {}) as Record<string, TSchema>
  for (const [name, field] of Object.entries(value)) {
    if (Object.hasOwn(properties, name)) {
      const found = unknownField(properties[name]!, field, `${path}${name}.`)
      if (found) return found
    } else if (schema.additionalProperties === false) {
      return { path: path + name, known: Object.keys(properties) }
    }
  }
  return undefined
}

const shown = (name: string) => (name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name)

/**
 * Route options for a JSON object body of these fields and no others:
 * `{ parse: 'json', ...strictBody({ name: t.String() }), detail }`. The schema says
 * `additionalProperties: false`, so the OpenAPI document says it too.
 */
export function strictBody<P extends Properties>(properties: P, options: { description?: string; refused?: Record<string, string> } = {}) {
  const { refused = {}, ...schemaOptions } = options
  const body = t.Object(properties, { ...schemaOptions, additionalProperties: false })
  return {
    body,
    transform({ body: value }: { body: unknown }) {
      // (a field the request may never set, with the reason: more help than "unknown")
      for (const [name, reason] of Object.entries(refused)) if (isPlainObject(value) && Object.hasOwn(value, name)) throw badRequest(reason)
      const found = unknownField(body, value)
      if (found) throw badRequest(`Unknown field ${shown(found.path)}: this request takes ${found.known.join(', ')}`)
    },
  }
}
