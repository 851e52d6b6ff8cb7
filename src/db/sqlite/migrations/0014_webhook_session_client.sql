-- session.created and session.ended name the OpenID client a session belongs to (clientId: an
-- OpenID grant is a refresh family with client_id, 0013_oidc), null for authd's own sessions.
DROP TRIGGER `webhook_session_created`;
--> statement-breakpoint
CREATE TRIGGER `webhook_session_created` AFTER INSERT ON `refresh_families` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'session.created', json_object('session', json_object('id', NEW.id, 'clientId', NEW.client_id), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
DROP TRIGGER `webhook_session_ended`;
--> statement-breakpoint
CREATE TRIGGER `webhook_session_ended` AFTER UPDATE OF revoked_at ON `refresh_families` WHEN OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'session.ended', json_object('session', json_object('id', NEW.id, 'clientId', NEW.client_id, 'reason', NEW.revoked_reason), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
