CREATE TABLE `passkeys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer NOT NULL,
	`transports` text NOT NULL,
	`device_type` text NOT NULL,
	`backed_up` integer NOT NULL,
	`aaguid` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `passkeys_credential_idx` ON `passkeys` (`tenant_id`,`credential_id`);--> statement-breakpoint
CREATE INDEX `passkeys_user_idx` ON `passkeys` (`user_id`);--> statement-breakpoint
CREATE TABLE `webauthn_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text,
	`purpose` text NOT NULL,
	`challenge` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webauthn_challenges_expires_idx` ON `webauthn_challenges` (`expires_at`);--> statement-breakpoint
ALTER TABLE `mfa_challenges` ADD `webauthn_challenge` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `slug` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `display_name` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `accent_color` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `logo_url` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `logo_image` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `logo_content_type` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `passkey_rp_id` text;--> statement-breakpoint
ALTER TABLE `tenants` ADD `passkey_origins` text;--> statement-breakpoint
CREATE UNIQUE INDEX `tenants_slug_idx` ON `tenants` (`slug`);