CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`give_up_at` integer NOT NULL,
	`last_attempt_at` integer,
	`last_status` integer,
	`last_error` text,
	`last_response` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_endpoint_event_idx` ON `webhook_deliveries` (`endpoint_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_in_flight_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`url` text NOT NULL,
	`event_types` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`sealed_secret` text NOT NULL,
	`previous_sealed_secret` text,
	`previous_secret_until` integer,
	`disabled_at` integer,
	`disabled_reason` text,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_tenant_idx` ON `webhook_endpoints` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	`fanned_out_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_events_fan_out_idx` ON `webhook_events` (`fanned_out_at`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_events_user_idx` ON `webhook_events` (`user_id`);
--> statement-breakpoint
-- Webhook events are written by these triggers, in the same transaction as the change
-- they report (scripts/webhook-triggers.ts; the PostgreSQL migration has the same triggers).
CREATE TRIGGER `webhook_user_created` AFTER INSERT ON `users` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.id, 'user.created', json_object('user', json_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_updated` AFTER UPDATE OF first_name, last_name, type, email ON `users` WHEN NEW.first_name IS NOT OLD.first_name OR NEW.last_name IS NOT OLD.last_name OR NEW.type IS NOT OLD.type OR NEW.email IS NOT OLD.email BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.id, 'user.updated', json_object('user', json_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_disabled` AFTER UPDATE OF disabled_at ON `users` WHEN OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.id, 'user.disabled', json_object('user', json_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_enabled` AFTER UPDATE OF disabled_at ON `users` WHEN OLD.disabled_at IS NOT NULL AND NEW.disabled_at IS NULL BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.id, 'user.enabled', json_object('user', json_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_password_changed` AFTER UPDATE OF password_hash ON `users` WHEN NEW.password_hash IS NOT NULL AND NEW.password_hash IS NOT OLD.password_hash AND (OLD.password_hash IS NULL OR NEW.session_epoch IS NOT OLD.session_epoch) BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.id, 'user.password_changed', json_object('user', json_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_deleted` AFTER DELETE ON `users` BEGIN UPDATE webhook_events SET data = json_object('user', json_object('id', OLD.id)) WHERE user_id = OLD.id; INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), OLD.tenant_id, OLD.id, 'user.deleted', json_object('user', json_object('id', OLD.id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_mfa_enabled` AFTER UPDATE OF confirmed_at ON `mfa_totp` WHEN OLD.confirmed_at IS NULL AND NEW.confirmed_at IS NOT NULL BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), (SELECT tenant_id FROM users WHERE id = NEW.user_id), NEW.user_id, 'user.mfa_enabled', json_object('user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_user_mfa_disabled` AFTER DELETE ON `mfa_totp` WHEN OLD.confirmed_at IS NOT NULL AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), (SELECT tenant_id FROM users WHERE id = OLD.user_id), OLD.user_id, 'user.mfa_disabled', json_object('user', json_object('id', OLD.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_passkey_added` AFTER INSERT ON `passkeys` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'passkey.added', json_object('passkey', json_object('id', NEW.id, 'name', NEW.name), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_passkey_removed` AFTER DELETE ON `passkeys` WHEN EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), OLD.tenant_id, OLD.user_id, 'passkey.removed', json_object('passkey', json_object('id', OLD.id, 'name', OLD.name), 'user', json_object('id', OLD.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_session_created` AFTER INSERT ON `refresh_families` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'session.created', json_object('session', json_object('id', NEW.id), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_session_ended` AFTER UPDATE OF revoked_at ON `refresh_families` WHEN OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'session.ended', json_object('session', json_object('id', NEW.id, 'reason', NEW.revoked_reason), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_signup_verified` AFTER INSERT ON `audit_events` WHEN NEW.type = 'signup.completed' BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'signup.verified', (SELECT json_object('user', json_object('id', u.id, 'email', u.email, 'firstName', u.first_name, 'lastName', u.last_name, 'type', u.type)) FROM users u WHERE u.id = NEW.user_id), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
