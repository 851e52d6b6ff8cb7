// Appends the webhook triggers to the `webhooks` migration of each engine (drizzle-kit does
// not generate triggers). Run after `npm run db:generate` has (re)generated that migration:
//   bun scripts/webhook-triggers.ts && bun scripts/embed-migrations.ts
// It does nothing to a migration that already has them. The session triggers written here
// were replaced by migration 0014 / pg 0010 (webhook_session_client), which adds clientId. The triggers write a webhook_events
// row in the same transaction as each change of product spec §22 (core/webhooks/events.ts).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const MARKER = '-- Webhook events are written by these triggers'
const BREAK = '\n--> statement-breakpoint\n'

// ---- SQLite ----------------------------------------------------------------------------
const now = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
const emit = (tenant: string, user: string, type: string, data: string) =>
  `INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), ${tenant}, ${user}, '${type}', ${data}, ${now});`
const person = (r: string) => `json_object('user', json_object('id', ${r}.id, 'email', ${r}.email, 'firstName', ${r}.first_name, 'lastName', ${r}.last_name, 'type', ${r}.type))`
const idOnly = (user: string) => `json_object('user', json_object('id', ${user}))`
// A factor or passkey removed with its user (erasure) is no event of its own: user.deleted says it.
const alive = 'EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)'
const tenantOf = (user: string) => `(SELECT tenant_id FROM users WHERE id = ${user})`
const trigger = (name: string, on: string, body: string) => `CREATE TRIGGER \`${name}\` ${on} BEGIN ${body} END;`

const sqliteTriggers = [
  trigger('webhook_user_created', 'AFTER INSERT ON `users`', emit('NEW.tenant_id', 'NEW.id', 'user.created', person('NEW'))),
  trigger(
    'webhook_user_updated',
    'AFTER UPDATE OF first_name, last_name, type, email ON `users` WHEN NEW.first_name IS NOT OLD.first_name OR NEW.last_name IS NOT OLD.last_name OR NEW.type IS NOT OLD.type OR NEW.email IS NOT OLD.email',
    emit('NEW.tenant_id', 'NEW.id', 'user.updated', person('NEW')),
  ),
  trigger('webhook_user_disabled', 'AFTER UPDATE OF disabled_at ON `users` WHEN OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL', emit('NEW.tenant_id', 'NEW.id', 'user.disabled', person('NEW'))),
  trigger('webhook_user_enabled', 'AFTER UPDATE OF disabled_at ON `users` WHEN OLD.disabled_at IS NOT NULL AND NEW.disabled_at IS NULL', emit('NEW.tenant_id', 'NEW.id', 'user.enabled', person('NEW'))),
  // A rehash at login (newer parameters, same password) leaves the session epoch alone; a
  // password set or changed moves it on, or sets the first one.
  trigger(
    'webhook_user_password_changed',
    'AFTER UPDATE OF password_hash ON `users` WHEN NEW.password_hash IS NOT NULL AND NEW.password_hash IS NOT OLD.password_hash AND (OLD.password_hash IS NULL OR NEW.session_epoch IS NOT OLD.session_epoch)',
    emit('NEW.tenant_id', 'NEW.id', 'user.password_changed', person('NEW')),
  ),
  // Erasure: the user's earlier events keep only the id (as audit rows do), then user.deleted.
  trigger('webhook_user_deleted', 'AFTER DELETE ON `users`', `UPDATE webhook_events SET data = ${idOnly('OLD.id')} WHERE user_id = OLD.id; ${emit('OLD.tenant_id', 'OLD.id', 'user.deleted', idOnly('OLD.id'))}`),
  trigger('webhook_user_mfa_enabled', 'AFTER UPDATE OF confirmed_at ON `mfa_totp` WHEN OLD.confirmed_at IS NULL AND NEW.confirmed_at IS NOT NULL', emit(tenantOf('NEW.user_id'), 'NEW.user_id', 'user.mfa_enabled', idOnly('NEW.user_id'))),
  trigger('webhook_user_mfa_disabled', `AFTER DELETE ON \`mfa_totp\` WHEN OLD.confirmed_at IS NOT NULL AND ${alive}`, emit(tenantOf('OLD.user_id'), 'OLD.user_id', 'user.mfa_disabled', idOnly('OLD.user_id'))),
  trigger('webhook_passkey_added', 'AFTER INSERT ON `passkeys`', emit('NEW.tenant_id', 'NEW.user_id', 'passkey.added', `json_object('passkey', json_object('id', NEW.id, 'name', NEW.name), 'user', json_object('id', NEW.user_id))`)),
  trigger('webhook_passkey_removed', `AFTER DELETE ON \`passkeys\` WHEN ${alive}`, emit('OLD.tenant_id', 'OLD.user_id', 'passkey.removed', `json_object('passkey', json_object('id', OLD.id, 'name', OLD.name), 'user', json_object('id', OLD.user_id))`)),
  trigger('webhook_session_created', 'AFTER INSERT ON `refresh_families`', emit('NEW.tenant_id', 'NEW.user_id', 'session.created', `json_object('session', json_object('id', NEW.id), 'user', json_object('id', NEW.user_id))`)),
  trigger(
    'webhook_session_ended',
    'AFTER UPDATE OF revoked_at ON `refresh_families` WHEN OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL',
    emit('NEW.tenant_id', 'NEW.user_id', 'session.ended', `json_object('session', json_object('id', NEW.id, 'reason', NEW.revoked_reason), 'user', json_object('id', NEW.user_id))`),
  ),
  trigger('webhook_signup_verified', "AFTER INSERT ON `audit_events` WHEN NEW.type = 'signup.completed'", emit('NEW.tenant_id', 'NEW.user_id', 'signup.verified', `(SELECT ${person('u')} FROM users u WHERE u.id = NEW.user_id)`)),
]

// ---- PostgreSQL --------------------------------------------------------------------------
const pgPerson = (r: string) => `jsonb_build_object('user', jsonb_build_object('id', ${r}.id, 'email', ${r}.email, 'firstName', ${r}.first_name, 'lastName', ${r}.last_name, 'type', ${r}.type))`
const pgIdOnly = (user: string) => `jsonb_build_object('user', jsonb_build_object('id', ${user}))`
const pgTriggers = [
  `CREATE FUNCTION webhook_emit(p_tenant text, p_user text, p_type text, p_data jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at)
  VALUES ('evt_' || replace(gen_random_uuid()::text, '-', ''), p_tenant, p_user, p_type, p_data::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$$;`,
  `CREATE FUNCTION webhook_users_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  about jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN
    -- Erasure: the user's earlier events keep only the id (as audit rows do), then user.deleted.
    UPDATE webhook_events SET data = (${pgIdOnly('OLD.id')})::text WHERE user_id = OLD.id;
    PERFORM webhook_emit(OLD.tenant_id, OLD.id, 'user.deleted', ${pgIdOnly('OLD.id')});
    RETURN NULL;
  END IF;
  about := ${pgPerson('NEW')};
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.created', about);
    RETURN NULL;
  END IF;
  IF (NEW.first_name, NEW.last_name, NEW.type, NEW.email) IS DISTINCT FROM (OLD.first_name, OLD.last_name, OLD.type, OLD.email) THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.updated', about);
  END IF;
  IF OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.disabled', about);
  ELSIF OLD.disabled_at IS NOT NULL AND NEW.disabled_at IS NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.enabled', about);
  END IF;
  -- A rehash at login (newer parameters, same password) leaves the session epoch alone; a
  -- password set or changed moves it on, or sets the first one.
  IF NEW.password_hash IS NOT NULL AND NEW.password_hash IS DISTINCT FROM OLD.password_hash
     AND (OLD.password_hash IS NULL OR NEW.session_epoch IS DISTINCT FROM OLD.session_epoch) THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.password_changed', about);
  END IF;
  RETURN NULL;
END $$;`,
  'CREATE TRIGGER webhook_users AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION webhook_users_changed();',
  `-- A factor or passkey removed with its user (erasure) is no event of its own: user.deleted says it.
CREATE FUNCTION webhook_mfa_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.confirmed_at IS NULL AND NEW.confirmed_at IS NOT NULL THEN
    PERFORM webhook_emit(u.tenant_id, u.id, 'user.mfa_enabled', ${pgIdOnly('u.id')}) FROM users u WHERE u.id = NEW.user_id;
  ELSIF TG_OP = 'DELETE' AND OLD.confirmed_at IS NOT NULL THEN
    PERFORM webhook_emit(u.tenant_id, u.id, 'user.mfa_disabled', ${pgIdOnly('u.id')}) FROM users u WHERE u.id = OLD.user_id;
  END IF;
  RETURN NULL;
END $$;`,
  'CREATE TRIGGER webhook_mfa AFTER UPDATE OR DELETE ON mfa_totp FOR EACH ROW EXECUTE FUNCTION webhook_mfa_changed();',
  `CREATE FUNCTION webhook_passkeys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'passkey.added', jsonb_build_object('passkey', jsonb_build_object('id', NEW.id, 'name', NEW.name), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) THEN
    PERFORM webhook_emit(OLD.tenant_id, OLD.user_id, 'passkey.removed', jsonb_build_object('passkey', jsonb_build_object('id', OLD.id, 'name', OLD.name), 'user', jsonb_build_object('id', OLD.user_id)));
  END IF;
  RETURN NULL;
END $$;`,
  'CREATE TRIGGER webhook_passkeys AFTER INSERT OR DELETE ON passkeys FOR EACH ROW EXECUTE FUNCTION webhook_passkeys_changed();',
  `CREATE FUNCTION webhook_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.created', jsonb_build_object('session', jsonb_build_object('id', NEW.id), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.ended', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'reason', NEW.revoked_reason), 'user', jsonb_build_object('id', NEW.user_id)));
  END IF;
  RETURN NULL;
END $$;`,
  'CREATE TRIGGER webhook_sessions AFTER INSERT OR UPDATE OF revoked_at ON refresh_families FOR EACH ROW EXECUTE FUNCTION webhook_sessions_changed();',
  `CREATE FUNCTION webhook_signup_verified() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_emit(u.tenant_id, u.id, 'signup.verified', ${pgPerson('u')}) FROM users u WHERE u.id = NEW.user_id;
  RETURN NULL;
END $$;`,
  "CREATE TRIGGER webhook_signup_verified AFTER INSERT ON audit_events FOR EACH ROW WHEN (NEW.type = 'signup.completed') EXECUTE FUNCTION webhook_signup_verified();",
]

function append(dir: string, triggers: string[], engine: string) {
  const file = readdirSync(dir).find((name) => name.endsWith('_webhooks.sql'))
  if (!file) throw new Error(`no *_webhooks.sql migration in ${dir}`)
  const path = join(dir, file)
  const sql = readFileSync(path, 'utf8')
  if (sql.includes(MARKER)) return console.log(`${path}: has the triggers already`)
  const header = `${MARKER}, in the same transaction as the change\n-- they report (scripts/webhook-triggers.ts; the ${engine} migration has the same triggers).\n`
  writeFileSync(path, `${sql.trimEnd()}${BREAK}${header}${triggers.join(BREAK)}\n`)
  console.log(`${path}: triggers appended`)
}

const root = join(import.meta.dir, '..')
append(join(root, 'src/db/sqlite/migrations'), sqliteTriggers, 'PostgreSQL')
append(join(root, 'src/db/pg/migrations'), pgTriggers, 'SQLite')
