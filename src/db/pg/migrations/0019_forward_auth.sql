CREATE TABLE "access_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"position" integer NOT NULL,
	"domain" text NOT NULL,
	"paths" text NOT NULL,
	"methods" text NOT NULL,
	"policy" text NOT NULL,
	"groups" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "forward_auth_domains" text;--> statement-breakpoint
ALTER TABLE "access_rules" ADD CONSTRAINT "access_rules_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_rules_tenant_position_idx" ON "access_rules" USING btree ("tenant_id","position");