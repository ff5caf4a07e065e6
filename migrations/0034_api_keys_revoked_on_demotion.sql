-- API keys act as the admin who made them. When that person stops being an admin their keys are
-- revoked for good, whichever statement lowers the role: a later promotion does not revive them
-- (the admin makes new keys). Kept in the database so that no code path can forget it.
CREATE FUNCTION api_keys_revoke_on_demotion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE api_keys SET revoked_at = now() WHERE created_by = NEW.id AND revoked_at IS NULL;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER users_role_demoted_revokes_api_keys
  AFTER UPDATE OF role ON users
  FOR EACH ROW
  WHEN (OLD.role = 'admin' AND NEW.role IS DISTINCT FROM 'admin')
  EXECUTE FUNCTION api_keys_revoke_on_demotion();
