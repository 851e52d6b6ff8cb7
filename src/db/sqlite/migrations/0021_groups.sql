CREATE TABLE `group_members` (
	`group_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`group_id`, `user_id`),
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `group_members_user_idx` ON `group_members` (`user_id`,`group_id`);--> statement-breakpoint
CREATE TABLE `groups` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `groups_tenant_name_idx` ON `groups` (`tenant_id`,`name`);--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `allowed_groups` text;--> statement-breakpoint
ALTER TABLE `oidc_clients` ADD `groups_claim` text DEFAULT 'scope' NOT NULL;
--> statement-breakpoint
-- Webhook events of groups (product spec §23; a group's own events name no user: user_id ''), written in the change's own transaction as the
-- other triggers are (scripts/webhook-triggers.ts); the PostgreSQL migration has the same.
CREATE TRIGGER `webhook_group_created` AFTER INSERT ON `groups` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, '', 'group.created', json_object('group', json_object('id', NEW.id, 'name', NEW.name, 'description', NEW.description)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_group_updated` AFTER UPDATE OF name, description ON `groups` WHEN NEW.name IS NOT OLD.name OR NEW.description IS NOT OLD.description BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, '', 'group.updated', json_object('group', json_object('id', NEW.id, 'name', NEW.name, 'description', NEW.description)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_group_deleted` AFTER DELETE ON `groups` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), OLD.tenant_id, '', 'group.deleted', json_object('group', json_object('id', OLD.id, 'name', OLD.name, 'description', OLD.description)), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_group_member_added` AFTER INSERT ON `group_members` BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), NEW.tenant_id, NEW.user_id, 'group.member_added', (SELECT json_object('group', json_object('id', g.id, 'name', g.name), 'user', json_object('id', NEW.user_id)) FROM groups g WHERE g.id = NEW.group_id), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_group_member_removed` AFTER DELETE ON `group_members` WHEN EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) AND EXISTS (SELECT 1 FROM groups WHERE id = OLD.group_id) BEGIN INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at) VALUES ('evt_' || lower(hex(randomblob(16))), OLD.tenant_id, OLD.user_id, 'group.member_removed', (SELECT json_object('group', json_object('id', g.id, 'name', g.name), 'user', json_object('id', OLD.user_id)) FROM groups g WHERE g.id = OLD.group_id), CAST(unixepoch('subsec') * 1000 AS INTEGER)); END;
