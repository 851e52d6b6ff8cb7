CREATE TABLE `mfa_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`remember_me` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`attempts` integer NOT NULL,
	`spent_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mfa_challenges_token_idx` ON `mfa_challenges` (`token_hash`);--> statement-breakpoint
CREATE INDEX `mfa_challenges_expires_idx` ON `mfa_challenges` (`expires_at`);--> statement-breakpoint
CREATE TABLE `mfa_recovery_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mfa_recovery_codes_user_idx` ON `mfa_recovery_codes` (`user_id`);--> statement-breakpoint
CREATE TABLE `mfa_totp` (
	`user_id` text PRIMARY KEY NOT NULL,
	`sealed_secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`confirmed_at` integer,
	`last_used_step` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `refresh_families` ADD `amr` text DEFAULT 'pwd' NOT NULL;