// CORS with credentials, for the configured origins only: any other origin gets no CORS
// headers, so its scripts cannot read our responses.
import { cors } from '@elysiajs/cors'

export const corsFor = (allowedOrigins: ReadonlySet<string>) =>
  cors({
    origin: (request) => allowedOrigins.has(request.headers.get('origin') ?? ''),
    credentials: true,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['content-type', 'x-api-key', 'authorization'],
    exposeHeaders: ['retry-after'],
    maxAge: 600,
  })
