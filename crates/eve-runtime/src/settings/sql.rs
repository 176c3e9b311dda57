//! The SQL of the system settings (`system_setting`, migration 0014): one row per key, the
//! value JSON text.

/// Every stored setting: `key, value`.
pub const SELECT_ALL: &str = "SELECT key, value FROM system_setting";

/// One stored setting's value. ?1 key.
pub const SELECT_ONE: &str = "SELECT value FROM system_setting WHERE key = ?1";

/// Stores several settings in one statement. ?1 a JSON array of `[key, value JSON text]`
/// pairs, ?2 now (ms), ?3 who.
pub const UPSERT_MANY: &str = "INSERT INTO system_setting (key, value, updated_at, updated_by) \
     SELECT json_extract(p.value, '$[0]'), json_extract(p.value, '$[1]'), ?2, ?3 \
     FROM json_each(?1) AS p WHERE true \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, \
     updated_by = excluded.updated_by";

/// Returns several settings to their bootstrap. ?1 a JSON array of keys.
pub const DELETE_MANY: &str =
    "DELETE FROM system_setting WHERE key IN (SELECT value FROM json_each(?1))";
