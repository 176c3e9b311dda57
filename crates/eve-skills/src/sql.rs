//! Every statement on skills (migration 0013). A write's ownership check is inside the
//! statement (`owner = ?` for a personal skill; the caller's admin flag, decided from SQL by
//! the component on this request, for a global one), so another principal's skill is never
//! touched.

/// The columns of a skill as `?1` sees it: its fields, whether `?1` switched it off, and
/// whether `?1`'s own enabled skill of the same name replaces it (a global one only).
macro_rules! visible_columns {
    () => {
        "s.id, s.owner, s.name, s.description, s.deferred, s.body, s.license, s.created_at, \
         s.updated_at, \
         EXISTS (SELECT 1 FROM skill_disabled AS d WHERE d.principal = ?1 AND d.skill_id = s.id), \
         (s.owner IS NULL AND EXISTS (SELECT 1 FROM skill AS p WHERE p.owner = ?1 \
            AND p.name = s.name AND NOT EXISTS (SELECT 1 FROM skill_disabled AS pd \
            WHERE pd.principal = ?1 AND pd.skill_id = p.id)))"
    };
}

/// The skills `?1` sees (its own, then the global ones, each by name), or only skill `?2`
/// when it is not NULL; at most `?3`.
pub const SELECT_VISIBLE: &str = concat!(
    "SELECT ",
    visible_columns!(),
    " FROM skill AS s WHERE (s.owner = ?1 OR s.owner IS NULL) AND (?2 IS NULL OR s.id = ?2) \
     ORDER BY s.owner IS NULL, s.name LIMIT ?3"
);

/// How many skills owner `?1` (NULL: the global ones) has, and whether one is named `?2`.
pub const OWNER_COUNT_AND_NAME: &str = "SELECT count(*), coalesce(sum(name = ?2), 0) \
    FROM skill WHERE owner IS ?1";

/// `?1` id, `?2` owner or NULL, `?3` name, `?4` description, `?5` deferred, `?6` body,
/// `?7` license, `?8` now; inserted only while the owner has fewer than `?9` skills and none
/// named `?3` (nothing returned otherwise).
pub const INSERT_SKILL: &str = "INSERT INTO skill \
    (id, owner, name, description, deferred, body, license, created_at, updated_at) \
    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8 \
    WHERE (SELECT count(*) FROM skill WHERE owner IS ?2) < ?9 \
    AND NOT EXISTS (SELECT 1 FROM skill WHERE owner IS ?2 AND name = ?3) RETURNING id";

/// Skill `?1`, if `?2` owns it or it is global and `?8` (the caller is an admin) is 1:
/// `?3` name, `?4` description, `?5` deferred, `?6` body (each NULL: kept), `?7` now. A new
/// name another skill of the owner has is left alone (nothing returned).
pub const UPDATE_SKILL: &str = "UPDATE skill SET name = coalesce(?3, name), \
    description = coalesce(?4, description), deferred = coalesce(?5, deferred), \
    body = coalesce(?6, body), updated_at = ?7 \
    WHERE id = ?1 AND (owner = ?2 OR (owner IS NULL AND ?8 = 1)) \
    AND (?3 IS NULL OR NOT EXISTS (SELECT 1 FROM skill AS o WHERE o.owner IS skill.owner \
        AND o.name = ?3 AND o.id <> skill.id)) RETURNING id";

/// Deletes skill `?1` if `?2` owns it, or it is global and `?3` is 1; the trigger of 0013
/// deletes its switches.
pub const DELETE_SKILL: &str = "DELETE FROM skill \
    WHERE id = ?1 AND (owner = ?2 OR (owner IS NULL AND ?3 = 1)) RETURNING id";

/// `?1` switches skill `?2` off (only a skill it sees).
pub const DISABLE_SKILL: &str = "INSERT OR IGNORE INTO skill_disabled (principal, skill_id) \
    SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM skill WHERE id = ?2 AND (owner = ?1 OR owner IS NULL))";

/// `?1` switches skill `?2` back on.
pub const ENABLE_SKILL: &str = "DELETE FROM skill_disabled WHERE principal = ?1 AND skill_id = ?2";

/// Whether `?1` (an account id) is an enabled admin now (as `eve_accounts`' own check).
pub const IS_ENABLED_ADMIN: &str = "SELECT EXISTS (SELECT 1 FROM account \
    WHERE id = ?1 AND role = 'admin' AND disabled = 0)";
