import { defineConfig } from 'drizzle-kit'

// The PostgreSQL migrations: the same schema as drizzle.config.ts's, for the other engine.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg/schema.ts',
  out: './src/db/pg/migrations',
})
