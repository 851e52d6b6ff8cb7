// The environment a CLI command reads its settings from (process.env, or a test's own).
export type Env = Record<string, string | undefined>
