// Preloaded by `bun test` (bunfig.toml): hooks here run once for the whole run, not per file.
import { afterAll } from 'bun:test'
import { removeTempDirs } from './helpers'

afterAll(removeTempDirs)
