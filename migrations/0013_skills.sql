-- 0013 (issue 22): skills — SKILL.md procedures the agent loads on demand with eve__skill.
--
-- A skill is global (`owner` NULL: managed by admins, offered to everyone) or personal
-- (`owner` a principal: offered to that principal only). A name is unique per owner — among
-- the global skills and among each principal's own — so the unique index is on
-- coalesce(owner, ''), SQLite treating NULLs as distinct. A personal skill may share its name
-- with a global one: it then replaces it for its owner (docs/skills.md), as eve's dynamic
-- skills replace static ones of the same name.
--
-- `skill_disabled` is a principal's switch: a row turns that skill off for that principal
-- (a global skill, or one of its own). Deleting a skill deletes its switches in the same
-- statement (the trigger), so no row outlives its skill.
CREATE TABLE IF NOT EXISTS skill (
    id          TEXT PRIMARY KEY NOT NULL,
    owner       TEXT,                          -- a principal, or NULL for a global skill
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    deferred    INTEGER NOT NULL DEFAULT 0 CHECK (deferred IN (0, 1)),
    body        TEXT NOT NULL,
    license     TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS skill_name_per_owner ON skill (coalesce(owner, ''), name);

CREATE TABLE IF NOT EXISTS skill_disabled (
    principal TEXT NOT NULL,
    skill_id  TEXT NOT NULL,
    PRIMARY KEY (principal, skill_id)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS skill_disabled_by_skill ON skill_disabled (skill_id);

CREATE TRIGGER IF NOT EXISTS skill_deleted AFTER DELETE ON skill
BEGIN
    DELETE FROM skill_disabled WHERE skill_id = OLD.id;
END;
