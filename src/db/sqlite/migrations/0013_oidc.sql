CREATE TABLE `oidc_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`secret_hash` text,
	`secret_prefix` text,
	`redirect_uris` text NOT NULL,
	`post_logout_redirect_uris` text NOT NULL,
	`first_party` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oidc_clients_tenant_idx` ON `oidc_clients` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `oidc_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`tenant_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text NOT NULL,
	`nonce` text,
	`scope` text NOT NULL,
	`auth_at` integer NOT NULL,
	`amr` text NOT NULL,
	`user_epoch` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	`family_id` text,
	FOREIGN KEY (`client_id`) REFERENCES `oidc_clients`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oidc_codes_hash_idx` ON `oidc_codes` (`code_hash`);--> statement-breakpoint
CREATE INDEX `oidc_codes_expires_idx` ON `oidc_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oidc_consents` (
	`user_id` text NOT NULL,
	`client_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`scope` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `client_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`client_id`) REFERENCES `oidc_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `client_id` text;--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `scope` text;