CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_id" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"lease_until" bigint,
	"give_up_at" bigint NOT NULL,
	"last_attempt_at" bigint,
	"last_status" integer,
	"last_error" text,
	"last_response" text,
	"created_at" bigint NOT NULL,
	"delivered_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"url" text NOT NULL,
	"event_types" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"sealed_secret" text NOT NULL,
	"previous_sealed_secret" text,
	"previous_secret_until" bigint,
	"disabled_at" bigint,
	"disabled_reason" text,
	"failing_since" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"user_id" text NOT NULL,
	"type" text NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL,
	"fanned_out_at" bigint
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_event_idx" ON "webhook_deliveries" USING btree ("endpoint_id","event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_in_flight_idx" ON "webhook_deliveries" USING btree ("endpoint_id","status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_tenant_idx" ON "webhook_endpoints" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "webhook_events_fan_out_idx" ON "webhook_events" USING btree ("fanned_out_at","created_at");--> statement-breakpoint
CREATE INDEX "webhook_events_user_idx" ON "webhook_events" USING btree ("user_id");
--> statement-breakpoint
-- Webhook events are written by these triggers, in the same transaction as the change
-- they report (scripts/webhook-triggers.ts; the SQLite migration has the same triggers).
CREATE FUNCTION webhook_emit(p_tenant text, p_user text, p_type text, p_data jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO webhook_events (id, tenant_id, user_id, type, data, created_at)
  VALUES ('evt_' || replace(gen_random_uuid()::text, '-', ''), p_tenant, p_user, p_type, p_data::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
$$;
--> statement-breakpoint
CREATE FUNCTION webhook_users_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  about jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN
    -- Erasure: the user's earlier events keep only the id (as audit rows do), then user.deleted.
    UPDATE webhook_events SET data = (jsonb_build_object('user', jsonb_build_object('id', OLD.id)))::text WHERE user_id = OLD.id;
    PERFORM webhook_emit(OLD.tenant_id, OLD.id, 'user.deleted', jsonb_build_object('user', jsonb_build_object('id', OLD.id)));
    RETURN NULL;
  END IF;
  about := jsonb_build_object('user', jsonb_build_object('id', NEW.id, 'email', NEW.email, 'firstName', NEW.first_name, 'lastName', NEW.last_name, 'type', NEW.type));
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.created', about);
    RETURN NULL;
  END IF;
  IF (NEW.first_name, NEW.last_name, NEW.type, NEW.email) IS DISTINCT FROM (OLD.first_name, OLD.last_name, OLD.type, OLD.email) THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.updated', about);
  END IF;
  IF OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.disabled', about);
  ELSIF OLD.disabled_at IS NOT NULL AND NEW.disabled_at IS NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.enabled', about);
  END IF;
  -- A rehash at login (newer parameters, same password) leaves the session epoch alone; a
  -- password set or changed moves it on, or sets the first one.
  IF NEW.password_hash IS NOT NULL AND NEW.password_hash IS DISTINCT FROM OLD.password_hash
     AND (OLD.password_hash IS NULL OR NEW.session_epoch IS DISTINCT FROM OLD.session_epoch) THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.id, 'user.password_changed', about);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_users AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION webhook_users_changed();
--> statement-breakpoint
-- A factor or passkey removed with its user (erasure) is no event of its own: user.deleted says it.
CREATE FUNCTION webhook_mfa_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.confirmed_at IS NULL AND NEW.confirmed_at IS NOT NULL THEN
    PERFORM webhook_emit(u.tenant_id, u.id, 'user.mfa_enabled', jsonb_build_object('user', jsonb_build_object('id', u.id))) FROM users u WHERE u.id = NEW.user_id;
  ELSIF TG_OP = 'DELETE' AND OLD.confirmed_at IS NOT NULL THEN
    PERFORM webhook_emit(u.tenant_id, u.id, 'user.mfa_disabled', jsonb_build_object('user', jsonb_build_object('id', u.id))) FROM users u WHERE u.id = OLD.user_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_mfa AFTER UPDATE OR DELETE ON mfa_totp FOR EACH ROW EXECUTE FUNCTION webhook_mfa_changed();
--> statement-breakpoint
CREATE FUNCTION webhook_passkeys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'passkey.added', jsonb_build_object('passkey', jsonb_build_object('id', NEW.id, 'name', NEW.name), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) THEN
    PERFORM webhook_emit(OLD.tenant_id, OLD.user_id, 'passkey.removed', jsonb_build_object('passkey', jsonb_build_object('id', OLD.id, 'name', OLD.name), 'user', jsonb_build_object('id', OLD.user_id)));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_passkeys AFTER INSERT OR DELETE ON passkeys FOR EACH ROW EXECUTE FUNCTION webhook_passkeys_changed();
--> statement-breakpoint
CREATE FUNCTION webhook_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.created', jsonb_build_object('session', jsonb_build_object('id', NEW.id), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.ended', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'reason', NEW.revoked_reason), 'user', jsonb_build_object('id', NEW.user_id)));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_sessions AFTER INSERT OR UPDATE OF revoked_at ON refresh_families FOR EACH ROW EXECUTE FUNCTION webhook_sessions_changed();
--> statement-breakpoint
CREATE FUNCTION webhook_signup_verified() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_emit(u.tenant_id, u.id, 'signup.verified', jsonb_build_object('user', jsonb_build_object('id', u.id, 'email', u.email, 'firstName', u.first_name, 'lastName', u.last_name, 'type', u.type))) FROM users u WHERE u.id = NEW.user_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_signup_verified AFTER INSERT ON audit_events FOR EACH ROW WHEN (NEW.type = 'signup.completed') EXECUTE FUNCTION webhook_signup_verified();
