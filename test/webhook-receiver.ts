// A webhook receiver as an operator would write one, on a real socket: it verifies every
// delivery with the Standard Webhooks library and answers as the test tells it (up, down,
// never, or with a redirect).
import { Webhook } from 'standardwebhooks'

/** A receiver as an operator would write one: verifies each delivery, answers as told. */
export function startReceiver() {
  const received: Array<{ id: string; type: string; data: any; body: string; signatures: string[] }> = []
  const state = { mode: 'ok' as 'ok' | 'down' | 'hang' | 'redirect', secrets: [] as string[], refused: 0, requests: 0 }
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(request): Promise<Response> {
      state.requests++
      const body = await request.text()
      if (state.mode === 'hang') return new Promise<Response>(() => {})
      if (state.mode === 'down') return new Response('down for maintenance', { status: 503 })
      if (state.mode === 'redirect') return new Response('x'.repeat(5000), { status: 302, headers: { location: `${server.url.origin}/elsewhere` } })
      const headers = Object.fromEntries(request.headers)
      for (const secret of state.secrets) {
        try {
          const payload = new Webhook(secret).verify(body, headers) as { type: string; data: unknown }
          received.push({ id: headers['webhook-id']!, type: payload.type, data: payload.data, body, signatures: headers['webhook-signature']!.split(' ') })
          return new Response('ok')
        } catch {
          // try the next secret
        }
      }
      state.refused++
      return new Response('bad signature', { status: 400 })
    },
  })
  return { url: `${server.url.origin}/hooks`, received, state, stop: () => server.stop(true), ids: () => new Set(received.map((r) => r.id)) }
}

/** Polls `condition` until it holds (or fails the test after `timeoutMs`). */
export async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}
