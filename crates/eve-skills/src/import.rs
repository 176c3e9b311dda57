//! Importing a skill: a `SKILL.md` text, or a zip of a skill folder. Only the `SKILL.md` is
//! kept: supporting files (`references/`, `scripts/`, `assets/`) need eve's sandbox, which
//! this app does not have (docs/skills.md). Nothing is extracted to any filesystem; every
//! size is bounded before it is read.

use std::io::{Cursor, Read};

use crate::skill_md::{self, SkillMd};

/// The largest zip accepted (the request body's cap too).
pub const MAX_ZIP_BYTES: usize = 1024 * 1024;
/// The most entries a zip may list.
pub const MAX_ZIP_ENTRIES: usize = 200;

/// What an import yields: the skill's name and its parsed `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub name: String,
    pub md: SkillMd,
}

/// A `SKILL.md` posted alone: named by `name` when given, else by its frontmatter `name`.
pub fn from_text(text: &str, name: Option<&str>) -> Result<Imported, String> {
    let md = skill_md::parse(text)?;
    let name = name
        .map(str::to_string)
        .or_else(|| md.name.clone())
        .ok_or("A SKILL.md posted alone needs a name: add \"name\" to its frontmatter.")?;
    skill_md::check_name(&name)?;
    Ok(Imported { name, md })
}

/// A zip of one skill folder: `<folder>/SKILL.md` (named by the folder, as eve names a
/// packaged skill) or `SKILL.md` at the top (named by its frontmatter).
pub fn from_zip(bytes: &[u8]) -> Result<Imported, String> {
    if bytes.len() > MAX_ZIP_BYTES {
        return Err(format!(
            "The zip may have at most {} KiB.",
            MAX_ZIP_BYTES / 1024
        ));
    }
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("This is not a readable zip file: {e}"))?;
    if archive.len() > MAX_ZIP_ENTRIES {
        return Err(format!("The zip may list at most {MAX_ZIP_ENTRIES} files."));
    }
    let (index, folder) = skill_entry(&mut archive)?;
    let text = read_entry(&mut archive, index)?;
    match folder {
        Some(folder) => {
            // eve's discovery: the folder's name is the skill's, checked by its rule.
            skill_md::check_name_at(&folder, Some(&format!("skills/{folder}/SKILL.md")))?;
            let md = skill_md::parse(&text)?;
            Ok(Imported { name: folder, md })
        }
        None => from_text(&text, None),
    }
}

type Archive<'a> = zip::ZipArchive<Cursor<&'a [u8]>>;

/// The one `SKILL.md` of the zip (eve matches the name case-insensitively), at the top or one
/// folder down, and that folder.
fn skill_entry(archive: &mut Archive) -> Result<(usize, Option<String>), String> {
    let mut found: Vec<(usize, Option<String>)> = Vec::new();
    for i in 0..archive.len() {
        let entry = archive
            .by_index_raw(i)
            .map_err(|e| format!("This is not a readable zip file: {e}"))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry
            .name()
            .map_err(|e| format!("This is not a readable zip file: {e}"))?
            .replace('\\', "/");
        // macOS's Finder adds these beside every folder it zips.
        if name.starts_with("__MACOSX/") {
            continue;
        }
        let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
        match parts.as_slice() {
            [file] if file.eq_ignore_ascii_case("SKILL.md") => found.push((i, None)),
            [folder, file] if file.eq_ignore_ascii_case("SKILL.md") => {
                found.push((i, Some(folder.to_string())))
            }
            _ => {}
        }
    }
    match found.len() {
        0 => Err("The zip has no SKILL.md (at its top or in one folder).".into()),
        1 => Ok(found.remove(0)),
        _ => Err("The zip holds more than one SKILL.md: import one skill at a time.".into()),
    }
}

/// The entry's text, read no further than the body's bound (a zip bomb stops there).
fn read_entry(archive: &mut Archive, index: usize) -> Result<String, String> {
    let entry = archive
        .by_index(index)
        .map_err(|e| format!("SKILL.md cannot be read from the zip: {e}"))?;
    let cap = skill_md::MAX_BODY_BYTES + 16 * 1024;
    let mut bytes = Vec::new();
    entry
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("SKILL.md cannot be read from the zip: {e}"))?;
    if bytes.len() > cap {
        return Err(format!("SKILL.md may have at most {} KiB.", cap / 1024));
    }
    String::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8 text.".into())
}
