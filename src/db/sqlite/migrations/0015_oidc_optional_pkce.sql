PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_oidc_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`tenant_id` text NOT NULL,
	`client_id` text NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text,
	`issuer` text,
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
INSERT INTO `__new_oidc_codes`("id", "code_hash", "tenant_id", "client_id", "user_id", "session_id", "redirect_uri", "code_challenge", "issuer", "nonce", "scope", "auth_at", "amr", "user_epoch", "created_at", "expires_at", "spent_at", "family_id") SELECT "id", "code_hash", "tenant_id", "client_id", "user_id", "session_id", "redirect_uri", "code_challenge", NULL, "nonce", "scope", "auth_at", "amr", "user_epoch", "created_at", "expires_at", "spent_at", "family_id" FROM `oidc_codes`;--> statement-breakpoint
DROP TABLE `oidc_codes`;--> statement-breakpoint
ALTER TABLE `__new_oidc_codes` RENAME TO `oidc_codes`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `oidc_codes_hash_idx` ON `oidc_codes` (`code_hash`);--> statement-breakpoint
CREATE INDEX `oidc_codes_expires_idx` ON `oidc_codes` (`expires_at`);