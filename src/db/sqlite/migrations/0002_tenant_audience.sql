ALTER TABLE `tenants` ADD `audience` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Every existing tenant gets the default audience derived from its id (core/tenants.ts).
UPDATE `tenants` SET `audience` = 'urn:authd:tenant:' || `id`;--> statement-breakpoint
CREATE UNIQUE INDEX `tenants_audience_idx` ON `tenants` (`audience`);
