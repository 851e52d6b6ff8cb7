CREATE TABLE `idempotency_keys` (
	`tenant_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`user_id` text,
	`status_code` integer,
	`sealed_response` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scope` text DEFAULT 'client' NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `api_key_id` text;--> statement-breakpoint
CREATE INDEX `users_tenant_id_idx` ON `users` (`tenant_id`,`id`);