CREATE TABLE "group_members" (
	"group_id" text NOT NULL,
	"user_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "group_members_group_id_user_id_pk" PRIMARY KEY("group_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "groups" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "allowed_groups" text;--> statement-breakpoint
ALTER TABLE "oidc_clients" ADD COLUMN "groups_claim" text DEFAULT 'scope' NOT NULL;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_group_id_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_members" ADD CONSTRAINT "group_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "groups" ADD CONSTRAINT "groups_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "group_members_user_idx" ON "group_members" USING btree ("user_id","group_id");--> statement-breakpoint
CREATE UNIQUE INDEX "groups_tenant_name_idx" ON "groups" USING btree ("tenant_id","name");
--> statement-breakpoint
-- Webhook events of groups (product spec §23; a group's own events name no user: user_id ''), as the other triggers (scripts/webhook-triggers.ts).
CREATE FUNCTION webhook_groups_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, '', 'group.created', jsonb_build_object('group', jsonb_build_object('id', NEW.id, 'name', NEW.name, 'description', NEW.description)));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM webhook_emit(OLD.tenant_id, '', 'group.deleted', jsonb_build_object('group', jsonb_build_object('id', OLD.id, 'name', OLD.name, 'description', OLD.description)));
  ELSIF (NEW.name, NEW.description) IS DISTINCT FROM (OLD.name, OLD.description) THEN
    PERFORM webhook_emit(NEW.tenant_id, '', 'group.updated', jsonb_build_object('group', jsonb_build_object('id', NEW.id, 'name', NEW.name, 'description', NEW.description)));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_groups AFTER INSERT OR UPDATE OR DELETE ON groups FOR EACH ROW EXECUTE FUNCTION webhook_groups_changed();
--> statement-breakpoint
-- A membership removed with its user (erasure) or its group (deletion) is no event of its own.
CREATE FUNCTION webhook_group_members_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'group.member_added', jsonb_build_object('group', jsonb_build_object('id', g.id, 'name', g.name), 'user', jsonb_build_object('id', NEW.user_id))) FROM groups g WHERE g.id = NEW.group_id;
  ELSIF EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) THEN
    PERFORM webhook_emit(OLD.tenant_id, OLD.user_id, 'group.member_removed', jsonb_build_object('group', jsonb_build_object('id', g.id, 'name', g.name), 'user', jsonb_build_object('id', OLD.user_id))) FROM groups g WHERE g.id = OLD.group_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_group_members AFTER INSERT OR DELETE ON group_members FOR EACH ROW EXECUTE FUNCTION webhook_group_members_changed();
