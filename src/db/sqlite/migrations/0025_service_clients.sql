ALTER TABLE `oidc_clients` ADD `service` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `scopes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `audiences` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `token_lifetime_sec` integer DEFAULT 900 NOT NULL;