ALTER TABLE `refresh_families` ADD `auth_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A session opened before this version proved its user when it was created.
UPDATE `refresh_families` SET `auth_at` = `created_at`;--> statement-breakpoint
-- Request fingerprints were a plain SHA-256 of the body, password included; the new ones
-- leave secrets out. The answers they kept are a 24-hour convenience, not data.
DELETE FROM `idempotency_keys`;
