ALTER TABLE `refresh_tokens` ADD `access_kid` text;--> statement-breakpoint
ALTER TABLE `signing_keys` ADD `revoked_at` integer;