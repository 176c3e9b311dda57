//! Office files are zip archives: what one may unpack to before it is read. A 5 MiB upload can
//! hold gigabytes of XML, and the agent runs in a wasm instance with a memory cap, where
//! running out of memory is a trap, not an error.

use std::io::{Cursor, Read};

use crate::ReadError;

/// The most bytes the parts of one archive may unpack to (as the archive declares them, and
/// as read: a part is never read past this).
pub const MAX_UNPACKED_BYTES: u64 = 64 * 1024 * 1024;

/// Whether `bytes` start as a zip archive does.
pub fn is_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

/// Opens the archive and refuses one whose parts unpack to more than [`MAX_UNPACKED_BYTES`].
pub fn open(bytes: &[u8]) -> Result<zip::ZipArchive<Cursor<&[u8]>>, ReadError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| ReadError::new(format!("it is not a valid zip archive ({e})")))?;
    let mut total = 0u64;
    for i in 0..archive.len() {
        let part = archive
            .by_index_raw(i)
            .map_err(|e| ReadError::new(format!("its archive is damaged ({e})")))?;
        total = total.saturating_add(part.size());
    }
    if total > MAX_UNPACKED_BYTES {
        return Err(ReadError::new(format!(
            "it unpacks to {total} bytes, more than the {MAX_UNPACKED_BYTES} read here"
        )));
    }
    Ok(archive)
}

/// The text of the archive's part `name`, read within [`MAX_UNPACKED_BYTES`].
pub fn part_text(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
) -> Result<String, ReadError> {
    let part = archive
        .by_name(name)
        .map_err(|_| ReadError::new(format!("it has no {name}")))?;
    let mut text = String::new();
    part.take(MAX_UNPACKED_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| ReadError::new(format!("its {name} cannot be read ({e})")))?;
    Ok(text)
}
