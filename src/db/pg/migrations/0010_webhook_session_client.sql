-- session.created and session.ended name the OpenID client a session belongs to (clientId: an
-- OpenID grant is a refresh family with client_id, 0009_oidc), null for authd's own sessions.
CREATE OR REPLACE FUNCTION webhook_sessions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.created', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'clientId', NEW.client_id), 'user', jsonb_build_object('id', NEW.user_id)));
  ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
    PERFORM webhook_emit(NEW.tenant_id, NEW.user_id, 'session.ended', jsonb_build_object('session', jsonb_build_object('id', NEW.id, 'clientId', NEW.client_id, 'reason', NEW.revoked_reason), 'user', jsonb_build_object('id', NEW.user_id)));
  END IF;
  RETURN NULL;
END $$;
