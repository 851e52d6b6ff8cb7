CREATE TABLE `federation_flows` (
	`id` text PRIMARY KEY NOT NULL,
	`state_hash` text NOT NULL,
	`tenant_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`intent` text NOT NULL,
	`user_id` text,
	`code_verifier_sealed` text NOT NULL,
	`nonce` text NOT NULL,
	`return_to` text,
	`stage` text NOT NULL,
	`pending_sealed` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`provider_id`) REFERENCES `identity_providers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `federation_flows_state_idx` ON `federation_flows` (`state_hash`);--> statement-breakpoint
CREATE INDEX `federation_flows_expires_idx` ON `federation_flows` (`expires_at`);--> statement-breakpoint
CREATE TABLE `identities` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`email` text,
	`email_verified` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`provider_id`) REFERENCES `identity_providers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identities_provider_subject_idx` ON `identities` (`provider_id`,`subject`);--> statement-breakpoint
CREATE INDEX `identities_user_idx` ON `identities` (`user_id`);--> statement-breakpoint
CREATE TABLE `identity_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`issuer` text,
	`client_id` text NOT NULL,
	`client_secret_sealed` text NOT NULL,
	`scopes` text NOT NULL,
	`link_by_email` text NOT NULL,
	`create_users` text,
	`trust_upstream_mfa` integer NOT NULL,
	`groups_claim` text,
	`group_map` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `identity_providers_tenant_name_idx` ON `identity_providers` (`tenant_id`,`name`);--> statement-breakpoint
ALTER TABLE `mfa_challenges` ADD `provider_id` text REFERENCES identity_providers(id) ON DELETE cascade;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `provider_id` text;--> statement-breakpoint
-- Webhook events of identities (product spec §25), written in the change's own transaction as the
-- other triggers are (scripts/webhook-triggers.ts); the PostgreSQL migration has the same. An
-- identity removed with its user (erasure) or its provider (deletion) is no event of its own.
CREATE TRIGGER `webhook_identity_linked` AFTER INSERT ON `identities` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'identity.linked', json_object('identity', json_object('id', NEW.id, 'providerId', NEW.provider_id, 'subject', NEW.subject, 'email', NEW.email), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_identity_unlinked` AFTER DELETE ON `identities` WHEN EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) AND EXISTS (SELECT 1 FROM identity_providers WHERE id = OLD.provider_id) BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), OLD.tenant_id, OLD.user_id, 'identity.unlinked', json_object('identity', json_object('id', OLD.id, 'providerId', OLD.provider_id, 'subject', OLD.subject, 'email', OLD.email), 'user', json_object('id', OLD.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
-- session.created names the provider a session was signed in through (providerId), null for
-- the other ways in; otherwise as 0014_webhook_session_client wrote it.
DROP TRIGGER `webhook_session_created`;
--> statement-breakpoint
CREATE TRIGGER `webhook_session_created` AFTER INSERT ON `refresh_families` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'session.created', json_object('session', json_object('id', NEW.id, 'clientId', NEW.client_id, 'providerId', NEW.provider_id), 'user', json_object('id', NEW.user_id)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
