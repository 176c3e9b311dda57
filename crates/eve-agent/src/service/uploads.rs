//! A message's files on their way in: checked against the owner's policy and the principal's
//! quota before anything is kept, then kept all or nothing (their ids replace their bytes in
//! the message's parts). Also how an attachment is served back.

use eve_projects::names::content_disposition;
use eve_store::sql::Sql;

use crate::protocol::uploads::{self, Upload, UploadPolicy};
use crate::protocol::{ids, Message, Refusal};
use crate::service::env::db_refusal;
use crate::session::store::AgentStore;

/// The refusal of files that would take the principal past its attachment quota.
pub fn quota_exceeded(policy: &UploadPolicy) -> Refusal {
    Refusal::new(
        413,
        Some("attachment_quota_exceeded"),
        format!(
            "Your attachments would exceed the {}-byte limit: delete chats with files to free space.",
            policy.quota_bytes
        ),
    )
}

/// A message's files checked against the policy and the quota, before anything is kept.
pub fn check<S: Sql>(
    store: &AgentStore<'_, S>,
    principal: &str,
    m: &Message,
    policy: &UploadPolicy,
) -> Result<Vec<Upload>, Refusal> {
    let uploads = uploads::check(&m.parts, policy)?;
    let adding: u64 = uploads.iter().map(|u| u.bytes.len() as u64).sum();
    if adding > 0 {
        let used = store.attachment_usage(principal).map_err(db_refusal)?;
        if used.saturating_add(adding) > policy.quota_bytes {
            return Err(quota_exceeded(policy));
        }
    }
    Ok(uploads)
}

/// Keeps the files of session `id` and puts their ids in the message's parts in place of
/// their bytes. On any failure the ones kept so far are deleted again: all or nothing.
pub fn keep<S: Sql>(
    store: &AgentStore<'_, S>,
    id: &str,
    principal: &str,
    m: &mut Message,
    uploads: Vec<Upload>,
    policy: &UploadPolicy,
    now_ms: i64,
) -> Result<Vec<String>, Refusal> {
    let mut kept: Vec<String> = Vec::new();
    for u in uploads {
        let aid = ids::attachment_id(eve_auth::crypto::random_bytes::<16>());
        let result = store.insert_attachment(
            &aid,
            principal,
            id,
            &u.media_type,
            u.filename.as_deref(),
            &u.bytes,
            policy.quota_bytes,
            now_ms,
        );
        match result {
            Ok(true) => {
                m.parts[u.part] = uploads::stored_part(&u, &aid);
                kept.push(aid);
            }
            other => {
                forget(store, principal, &kept);
                return Err(match other {
                    Err(e) => db_refusal(e),
                    _ => quota_exceeded(policy),
                });
            }
        }
    }
    Ok(kept)
}

/// Deletes attachments kept for a message that is not kept after all.
pub fn forget<S: Sql>(store: &AgentStore<'_, S>, principal: &str, ids: &[String]) {
    for aid in ids {
        if let Err(e) = store.delete_attachment(aid, principal) {
            eprintln!("agent: deleting attachment {aid}: {e}");
        }
    }
}

/// How long a browser may keep an attachment: not at all. A private cache entry would outlive
/// a logout or the chat's delete (issue 19 item 7); the bytes are fetched again when shown.
pub const CACHE_CONTROL: &str = "no-store";

/// An attachment as it is served: its bytes, the type it is served with, how the browser
/// gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub media_type: &'static str,
    pub disposition: String,
    pub data: Vec<u8>,
}

/// How attachment bytes are served so that nothing of them runs on our origin: an image as
/// itself (the thumbnails), anything else as a download, under a file name made safe (the
/// same `content-disposition` as a project file's download).
pub fn served(media_type: &str, filename: Option<&str>, data: Vec<u8>) -> Served {
    let media = uploads::served_media_type(media_type, &data);
    let name = filename.unwrap_or("attachment");
    Served {
        media_type: media,
        disposition: content_disposition(name, media.starts_with("image/")),
        data,
    }
}

/// One of the caller's attachments, as it is served (`None`: unknown, or someone else's).
pub fn read<S: Sql>(db: &S, principal: &str, id: &str) -> Result<Option<Served>, Refusal> {
    let found = AgentStore::new(db)
        .attachment(id, principal)
        .map_err(db_refusal)?;
    Ok(found.map(|a| served(&a.media_type, a.filename.as_deref(), a.data)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_served_inline_and_anything_else_as_a_download_under_a_safe_name() {
        let png = b"\x89PNG\r\n\x1a\n\0\0".to_vec();
        let s = served("image/png", Some("a b.png"), png);
        assert_eq!(s.media_type, "image/png");
        assert_eq!(
            s.disposition,
            "inline; filename=\"a b.png\"; filename*=UTF-8''a%20b.png"
        );
        let s = served("text/html", Some("<x>\".html"), b"<b>".to_vec());
        assert_eq!(s.media_type, "application/octet-stream");
        assert_eq!(
            s.disposition,
            "attachment; filename=\"_x__.html\"; filename*=UTF-8''%3Cx%3E%22.html"
        );
        let s = served("image/png", None, b"<svg>".to_vec());
        assert!(s
            .disposition
            .starts_with("attachment; filename=\"attachment\";"));
    }
}
