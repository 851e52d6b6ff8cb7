ALTER TABLE "refresh_families" ADD COLUMN "last_used_at" bigint;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "ip" text;--> statement-breakpoint
ALTER TABLE "refresh_families" ADD COLUMN "user_agent" text;