//! Every statement on providers (migration 0014). Spin runs one statement per call and no
//! transaction, so each write is one statement that leaves a whole state: a provider row is
//! inserted before its models, and replacing the models first upserts the new list and then
//! deletes what it does not name.

/// A provider's columns, in the order `row_provider` reads them.
macro_rules! provider_columns {
    () => {
        "id, name, kind, base_url, api_key_sealed, key_id, max_tokens, created_at, updated_at"
    };
}

/// Every provider, by name.
pub const SELECT_PROVIDERS: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM provider ORDER BY name"
);

/// Provider `?1`.
pub const SELECT_PROVIDER: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM provider WHERE id = ?1"
);

/// Every provider's models, in each provider's order: provider id, model, label, enabled,
/// context tokens.
pub const SELECT_MODELS: &str = "SELECT provider_id, model, label, enabled, context_tokens \
    FROM provider_model ORDER BY provider_id, position, model";

/// `?1` id, `?2` name, `?3` kind, `?4` base URL, `?5` sealed key or NULL, `?6` its key id,
/// `?7` max tokens or NULL, `?8` now. Nothing returned when the name is taken.
pub const INSERT_PROVIDER: &str = "INSERT INTO provider \
    (id, name, kind, base_url, api_key_sealed, key_id, max_tokens, created_at, updated_at) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) ON CONFLICT (name) DO NOTHING RETURNING id";

/// Provider `?1`: `?2` base URL (NULL: kept); when `?3` is 1 the key becomes `?4` sealed
/// under key id `?5` (both NULL: removed); when `?6` is 1 max tokens becomes `?7`; `?8` now.
/// Only while its base URL is still `?9`, the one the patch was decided against: whether the
/// key stays depends on the URL it was entered for, so a concurrent URL change makes this
/// write change nothing (nothing returned) rather than keep a key for the wrong URL.
pub const UPDATE_PROVIDER: &str = "UPDATE provider SET base_url = coalesce(?2, base_url), \
    api_key_sealed = CASE WHEN ?3 = 1 THEN ?4 ELSE api_key_sealed END, \
    key_id = CASE WHEN ?3 = 1 THEN ?5 ELSE key_id END, \
    max_tokens = CASE WHEN ?6 = 1 THEN ?7 ELSE max_tokens END, updated_at = ?8 \
    WHERE id = ?1 AND base_url = ?9 RETURNING id";

/// Upserts provider `?1`'s models from `?2`, a JSON array of `{model, label, enabled,
/// contextTokens}` whose index is the position; only while the provider exists.
pub const UPSERT_MODELS: &str = "INSERT INTO provider_model \
    (provider_id, model, label, enabled, context_tokens, position) \
    SELECT ?1, json_extract(value, '$.model'), json_extract(value, '$.label'), \
    json_extract(value, '$.enabled'), json_extract(value, '$.contextTokens'), key \
    FROM json_each(?2) WHERE EXISTS (SELECT 1 FROM provider WHERE id = ?1) \
    ON CONFLICT (provider_id, model) DO UPDATE SET label = excluded.label, \
    enabled = excluded.enabled, context_tokens = excluded.context_tokens, \
    position = excluded.position";

/// Deletes provider `?1`'s models that the JSON array of model names `?2` does not hold.
pub const DELETE_OTHER_MODELS: &str = "DELETE FROM provider_model WHERE provider_id = ?1 \
    AND model NOT IN (SELECT value FROM json_each(?2))";

/// Deletes provider `?1`; the trigger of 0014 deletes its models.
pub const DELETE_PROVIDER: &str = "DELETE FROM provider WHERE id = ?1 RETURNING id";

/// The providers with a key: id and sealed key (what a rotation looks at).
pub const SELECT_SEALED: &str =
    "SELECT id, api_key_sealed FROM provider WHERE api_key_sealed IS NOT NULL";

/// Provider `?1`'s key becomes `?3` under key id `?4`, if it is still `?2` (a concurrent
/// change wins).
pub const RESEAL: &str = "UPDATE provider SET api_key_sealed = ?3, key_id = ?4 \
    WHERE id = ?1 AND api_key_sealed = ?2 RETURNING id";

/// Whether a provider is named `?1`.
pub const NAME_EXISTS: &str = "SELECT 1 FROM provider WHERE name = ?1";
