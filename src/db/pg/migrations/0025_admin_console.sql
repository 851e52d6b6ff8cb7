ALTER TABLE "audit_events" ADD COLUMN "actor_user_id" text;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "console_enabled" boolean DEFAULT true NOT NULL;