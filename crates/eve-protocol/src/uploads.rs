//! The upload policy, as eve 0.80.1 applies it to files in messages: a `{"type":"file",
//! "mediaType","filename"?,"data"}` part whose `data` is base64 or a base64 `data:` URL. eve's
//! `UploadPolicy` (a decoded-size cap per file and allowed media types, media type checked
//! first) refuses with 413 / 415 and eve's `violations`; what passes is decoded here and kept
//! by the component as an attachment (its id, its stored part, the type it is served with).
//! What a model call gets of a file is decided in `eve_providers::files`.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use eve_api::eve::{MessagePart, UploadViolation};
use eve_api::variables::Bounded;

use crate::limits::MAX_BODY_BYTES;
pub use crate::limits::MAX_MAX_BYTES;
use crate::refusal::Refusal;

/// `attachment_max_bytes` unset: 5 MiB per file (decoded).
pub const DEFAULT_MAX_BYTES: u64 = 5 * 1024 * 1024;
/// `attachment_types` unset: images providers read, PDFs, text, and the office documents
/// the agent reads (`eve_documents::kinds::MEDIA_TYPES`: workbooks and Word documents).
pub const DEFAULT_TYPES: &str = "image/png,image/jpeg,image/gif,image/webp,application/pdf,\
text/*,application/json,application/xml,application/yaml,\
application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,\
application/vnd.ms-excel.sheet.macroenabled.12,\
application/vnd.ms-excel.sheet.binary.macroenabled.12,application/vnd.ms-excel,\
application/vnd.oasis.opendocument.spreadsheet,\
application/vnd.openxmlformats-officedocument.wordprocessingml.document";
/// `attachment_quota_bytes` unset: 100 MiB of attachments per principal.
pub const DEFAULT_QUOTA_BYTES: u64 = 100 * 1024 * 1024;
/// The longest file name kept.
pub const MAX_FILENAME_CHARS: usize = 255;

/// The owner's upload policy (Spin variables `attachment_max_bytes`, `attachment_types`,
/// `attachment_quota_bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadPolicy {
    /// The largest decoded file; 0 refuses every file (eve's rule).
    pub max_bytes: u64,
    /// Exact types or `type/*` patterns, lower case; `None` is eve's `"*"`.
    pub allowed: Option<Vec<String>>,
    /// The most attachment bytes one principal stores.
    pub quota_bytes: u64,
}

impl Default for UploadPolicy {
    fn default() -> Self {
        UploadPolicy::from_vars(None, None, None)
    }
}

impl UploadPolicy {
    /// From the variables: unset is the default, a number past its range is clamped (a cap
    /// above [`MAX_MAX_BYTES`] is that) and anything else the default, both logged.
    pub fn from_vars(max: Option<&str>, types: Option<&str>, quota: Option<&str>) -> Self {
        let types = types.map(str::trim).filter(|t| !t.is_empty());
        let allowed = match types.unwrap_or(DEFAULT_TYPES) {
            "*" => None,
            list => Some(
                list.split(',')
                    .map(|t| t.trim().to_ascii_lowercase())
                    .filter(|t| !t.is_empty())
                    .collect(),
            ),
        };
        let max_bytes = Bounded {
            name: "attachment_max_bytes",
            default: DEFAULT_MAX_BYTES,
            min: 0,
            max: MAX_MAX_BYTES,
        };
        let quota_bytes = Bounded {
            name: "attachment_quota_bytes",
            default: DEFAULT_QUOTA_BYTES,
            min: 0,
            max: i64::MAX as u64,
        };
        UploadPolicy {
            max_bytes: max_bytes.read(max),
            allowed,
            quota_bytes: quota_bytes.read(quota),
        }
    }

    /// eve's `isMediaTypeAllowed`: exact, or a `type/*` pattern.
    pub fn allows(&self, media_type: &str) -> bool {
        let Some(allowed) = &self.allowed else {
            return true;
        };
        let m = media_type.to_ascii_lowercase();
        allowed.iter().any(|a| {
            a == &m
                || a.strip_suffix('*')
                    .is_some_and(|prefix| prefix.ends_with('/') && m.starts_with(prefix))
        })
    }

    /// The largest body of a message route: the usual cap plus one file at the cap in
    /// base64 (several files of one message share that room).
    pub fn message_body_cap(&self) -> usize {
        MAX_BODY_BYTES + (self.max_bytes as usize).div_ceil(3) * 4
    }
}

/// A file part that passed the policy, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// Its index among the message's parts.
    pub part: usize,
    pub media_type: String,
    pub filename: Option<String>,
    pub bytes: Vec<u8>,
}

fn invalid(why: &str) -> Refusal {
    Refusal::bad_request(format!("Invalid 'file' message part: {why}"))
}

/// Standard base64, padding optional on decode (clients differ); the providers send files
/// back to models with it.
pub const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// `data` as eve takes it: a base64 string or a base64 `data:` URL.
pub fn decode_data(data: &str) -> Result<Vec<u8>, Refusal> {
    let payload = match data.strip_prefix("data:") {
        Some(rest) => {
            let (head, payload) = rest
                .split_once(',')
                .ok_or_else(|| invalid("a data: URL needs a ','."))?;
            if !head
                .split(';')
                .any(|p| p.trim().eq_ignore_ascii_case("base64"))
            {
                return Err(invalid("only base64 data: URLs are accepted."));
            }
            payload
        }
        None => data,
    };
    let compact: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    BASE64
        .decode(compact.as_bytes())
        .map_err(|_| invalid("'data' is not valid base64."))
}

/// A media type's essence (`type/subtype`, lower case, parameters dropped), or `None` when it
/// is not one.
pub fn essence(media_type: &str) -> Option<String> {
    let m = media_type.split(';').next()?.trim().to_ascii_lowercase();
    let (t, s) = m.split_once('/')?;
    let token = |x: &str| {
        !x.is_empty()
            && x.len() <= 127
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    (token(t) && token(s)).then_some(m)
}

/// A file name as it is kept and shown: its last path segment, without control characters,
/// at most [`MAX_FILENAME_CHARS`].
pub fn clean_filename(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_FILENAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().to_string();
    (!cleaned.is_empty()).then_some(cleaned)
}

/// eve's `formatUploadPolicyViolation`.
pub fn describe(v: &UploadViolation) -> String {
    match v {
        UploadViolation::TooLarge {
            byte_length,
            filename,
            limit,
            media_type,
        } => format!(
            "{} ({byte_length} bytes) exceeds the {limit}-byte upload limit.",
            filename.as_deref().unwrap_or(media_type)
        ),
        UploadViolation::DisallowedMediaType {
            allowed_media_types,
            filename,
            media_type,
        } => {
            let allowed = if allowed_media_types.is_empty() {
                String::new()
            } else {
                format!(" Allowed: {}.", allowed_media_types.join(", "))
            };
            format!(
                "{} has media type \"{media_type}\" which is not allowed by this route.{allowed}",
                filename.as_deref().unwrap_or(media_type)
            )
        }
    }
}

/// The refusal of a message with `violations` (non-empty): 413 when the first is too large,
/// else 415, with eve's body.
pub fn refusal(violations: Vec<UploadViolation>) -> Refusal {
    let status = match violations.first() {
        Some(UploadViolation::TooLarge { .. }) => 413,
        _ => 415,
    };
    let mut r = Refusal::new(
        status,
        None,
        violations.first().map(describe).unwrap_or_default(),
    );
    r.violations = violations;
    r
}

/// Checks a message's file parts against `policy` (every violation, in order, as eve lists
/// them) and decodes those that carry bytes. A part without `data` or `url`, with an invalid
/// media type or undecodable `data`, or naming an `attachmentId` itself is a 400.
pub fn check(parts: &[MessagePart], policy: &UploadPolicy) -> Result<Vec<Upload>, Refusal> {
    let mut violations = Vec::new();
    let mut uploads = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let MessagePart::File {
            media_type,
            filename,
            data,
            url,
            attachment_id,
            size,
            project_file_id,
        } = part
        else {
            continue;
        };
        if attachment_id.is_some() || size.is_some() {
            return Err(invalid("'attachmentId' and 'size' are set by the agent."));
        }
        if let Some(id) = project_file_id {
            // Stored already (it passed the policy when it was kept, its bytes count once):
            // the part names it and brings nothing (`service::project_files` resolves it).
            if data.is_some() || url.is_some() || !is_project_file_id(id) {
                return Err(invalid(
                    "'projectFileId' names a project file: send it without 'data' or 'url'.",
                ));
            }
            continue;
        }
        let Some(essence) = essence(media_type) else {
            return Err(invalid(
                "'mediaType' must be a media type such as image/png.",
            ));
        };
        let filename = filename.as_deref().and_then(clean_filename);
        if policy.max_bytes == 0 || !policy.allows(&essence) {
            violations.push(UploadViolation::DisallowedMediaType {
                allowed_media_types: policy.allowed.clone().unwrap_or_default(),
                filename,
                media_type: media_type.clone(),
            });
            continue;
        }
        match (data, url) {
            (Some(data), _) => {
                let bytes = decode_data(data)?;
                if bytes.len() as u64 > policy.max_bytes {
                    violations.push(UploadViolation::TooLarge {
                        byte_length: bytes.len() as u64,
                        filename,
                        limit: policy.max_bytes,
                        media_type: media_type.clone(),
                    });
                    continue;
                }
                uploads.push(Upload {
                    part: i,
                    media_type: essence,
                    filename,
                    bytes,
                });
            }
            (None, Some(_)) => {}
            (None, None) => return Err(invalid("expected 'data' or 'url'.")),
        }
    }
    if violations.is_empty() {
        Ok(uploads)
    } else {
        Err(refusal(violations))
    }
}

/// The part as it is kept once its bytes are stored as `attachment_id`: no `data`.
pub fn stored_part(upload: &Upload, attachment_id: &str) -> MessagePart {
    MessagePart::File {
        media_type: upload.media_type.clone(),
        filename: upload.filename.clone(),
        data: None,
        url: None,
        attachment_id: Some(attachment_id.to_string()),
        size: Some(upload.bytes.len() as u64),
        project_file_id: None,
    }
}

/// Whether `id` can name a project file (`file_` and a short token, as both the `projects`
/// component and the agent mint them).
pub fn is_project_file_id(id: &str) -> bool {
    id.starts_with("file_") && crate::ids::is_token(id, 64)
}

/// The media type an attachment is served with: images a browser shows as themselves (what
/// the thumbnails need), anything else as bytes to download (never rendered on our origin).
pub fn served_media_type(media_type: &str, bytes: &[u8]) -> &'static str {
    match sniff(media_type, bytes) {
        Kind::Image(t) => t,
        _ => "application/octet-stream",
    }
}

/// What a file is, by its declared type checked against its bytes (eve stages a mismatched
/// image or PDF as `application/octet-stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Image(&'static str),
    Pdf,
    Text,
    Other,
}

pub fn sniff(media_type: &str, bytes: &[u8]) -> Kind {
    let m = essence(media_type).unwrap_or_default();
    let image = |t: &'static str, ok: bool| if ok { Kind::Image(t) } else { Kind::Other };
    match m.as_str() {
        "image/png" => image("image/png", bytes.starts_with(b"\x89PNG\r\n\x1a\n")),
        "image/jpeg" => image("image/jpeg", bytes.starts_with(&[0xFF, 0xD8, 0xFF])),
        "image/gif" => image(
            "image/gif",
            bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        ),
        "image/webp" => image(
            "image/webp",
            bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        ),
        "application/pdf" if bytes.starts_with(b"%PDF-") => Kind::Pdf,
        _ if is_text_type(&m) && std::str::from_utf8(bytes).is_ok() => Kind::Text,
        _ => Kind::Other,
    }
}

fn is_text_type(m: &str) -> bool {
    m.starts_with("text/")
        || m.ends_with("+json")
        || m.ends_with("+xml")
        || matches!(
            m,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/x-sh"
                | "application/sql"
                | "application/toml"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn office_documents_the_agent_reads_are_accepted_by_default() {
        let policy = UploadPolicy::default();
        for t in eve_documents::kinds::MEDIA_TYPES {
            assert!(policy.allows(t), "{t}");
        }
        assert!(!policy.allows("application/x-msdownload"));
        // spin.toml's default is the one that applies on a deployment: the same list.
        let manifest = include_str!("../../../spin.toml");
        let line = format!("attachment_types = {{ default = \"{DEFAULT_TYPES}\" }}");
        assert!(
            manifest.contains(&line),
            "spin.toml's attachment_types default differs"
        );
    }
    use crate::ids::{attachment_id, is_attachment_id};

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn file(media_type: &str, filename: &str, data: &str) -> MessagePart {
        MessagePart::File {
            media_type: media_type.into(),
            filename: Some(filename.into()),
            data: Some(data.into()),
            url: None,
            attachment_id: None,
            size: None,
            project_file_id: None,
        }
    }

    #[test]
    fn data_is_base64_or_a_base64_data_url() {
        assert_eq!(decode_data("aGk=").unwrap(), b"hi");
        assert_eq!(decode_data("aGk").unwrap(), b"hi");
        assert_eq!(decode_data("data:text/plain;base64,aGk=").unwrap(), b"hi");
        assert_eq!(decode_data("aG\nk=").unwrap(), b"hi");
        assert!(decode_data("data:text/plain,hi").is_err());
        assert!(decode_data("data:text/plain;base64").is_err());
        assert!(decode_data("not base64!").is_err());
    }

    #[test]
    fn the_policy_matches_exact_types_and_wildcards_like_eve() {
        let p = UploadPolicy::from_vars(Some("10"), Some("image/*, application/pdf"), None);
        assert!(p.allows("image/png"));
        assert!(p.allows("IMAGE/JPEG"));
        assert!(p.allows("application/pdf"));
        assert!(!p.allows("application/pdfx"));
        assert!(!p.allows("text/plain"));
        assert!(UploadPolicy::from_vars(None, Some("*"), None).allows("video/mp4"));
        let d = UploadPolicy::default();
        assert_eq!(d.max_bytes, DEFAULT_MAX_BYTES);
        assert!(d.allows("text/csv") && d.allows("image/webp") && !d.allows("video/mp4"));
        assert_eq!(
            UploadPolicy::from_vars(Some("999999999999"), None, None).max_bytes,
            MAX_MAX_BYTES
        );
        assert_eq!(
            UploadPolicy::from_vars(Some("x"), None, Some("-1")),
            UploadPolicy::default()
        );
    }

    #[test]
    fn a_body_with_one_file_at_the_cap_fits_the_message_route() {
        let p = UploadPolicy::from_vars(Some("3000"), None, None);
        let encoded = BASE64.encode(vec![0u8; 3000]).len();
        assert!(p.message_body_cap() >= MAX_BODY_BYTES + encoded);
        assert!(p.message_body_cap() < MAX_BODY_BYTES + encoded + 8);
    }

    #[test]
    fn media_type_is_checked_before_size_and_every_violation_is_listed() {
        let p = UploadPolicy::from_vars(Some("2"), Some("text/*"), None);
        let parts = vec![
            MessagePart::Text { text: "see".into() },
            file("video/mp4", "big.mp4", "aGVsbG8="),
            file("text/plain", "long.txt", "aGVsbG8="),
        ];
        let r = check(&parts, &p).unwrap_err();
        assert_eq!(r.status, 415);
        assert_eq!(
            r.message,
            "big.mp4 has media type \"video/mp4\" which is not allowed by this route. Allowed: text/*."
        );
        assert_eq!(r.violations.len(), 2);
        assert_eq!(
            r.violations[1],
            UploadViolation::TooLarge {
                byte_length: 5,
                filename: Some("long.txt".into()),
                limit: 2,
                media_type: "text/plain".into()
            }
        );
        let only_size = check(&parts[2..], &p).unwrap_err();
        assert_eq!(only_size.status, 413);
        assert_eq!(
            only_size.message,
            "long.txt (5 bytes) exceeds the 2-byte upload limit."
        );
        let json: serde_json::Value = serde_json::from_str(&only_size.to_json()).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["violations"][0]["kind"], "too-large");
        assert_eq!(json["violations"][0]["byteLength"], 5);
    }

    #[test]
    fn accepted_files_are_decoded_and_kept_without_their_data() {
        let p = UploadPolicy::default();
        let parts = vec![file("Text/Plain; charset=utf-8", "../../etc/a.txt", "aGk=")];
        let u = check(&parts, &p).unwrap();
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].bytes, b"hi");
        assert_eq!(u[0].media_type, "text/plain");
        assert_eq!(u[0].filename.as_deref(), Some("a.txt"));
        let kept = stored_part(&u[0], "att_1");
        let json = serde_json::to_value(&kept).unwrap();
        assert_eq!(json["attachmentId"], "att_1");
        assert_eq!(json["size"], 2);
        assert!(json.get("data").is_none());
    }

    #[test]
    fn malformed_parts_are_a_400() {
        let p = UploadPolicy::default();
        assert_eq!(
            check(&[file("nonsense", "a", "aGk=")], &p)
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            check(&[file("text/plain", "a", "%%%")], &p)
                .unwrap_err()
                .status,
            400
        );
        let forged = MessagePart::File {
            media_type: "image/png".into(),
            filename: None,
            data: Some("aGk=".into()),
            url: None,
            attachment_id: Some("att_someone_elses".into()),
            size: None,
            project_file_id: None,
        };
        assert_eq!(check(&[forged], &p).unwrap_err().status, 400);
        let neither = MessagePart::File {
            media_type: "image/png".into(),
            filename: None,
            data: None,
            url: None,
            attachment_id: None,
            size: None,
            project_file_id: None,
        };
        assert_eq!(check(&[neither], &p).unwrap_err().status, 400);
        let zero = UploadPolicy::from_vars(Some("0"), None, None);
        assert_eq!(
            check(&[file("text/plain", "a", "aGk=")], &zero)
                .unwrap_err()
                .status,
            415
        );
    }

    #[test]
    fn a_project_file_reference_brings_no_bytes_and_is_not_an_upload() {
        let p = UploadPolicy::from_vars(Some("1"), Some("image/png"), None);
        let part = |data: Option<&str>, id: &str| MessagePart::File {
            media_type: "text/csv".into(),
            filename: None,
            data: data.map(str::to_string),
            url: None,
            attachment_id: None,
            size: None,
            project_file_id: Some(id.into()),
        };
        // Not checked against today's policy: it was kept already, its bytes count once.
        assert_eq!(check(&[part(None, "file_abc")], &p).unwrap(), vec![]);
        assert_eq!(
            check(&[part(Some("aGk="), "file_abc")], &p)
                .unwrap_err()
                .status,
            400
        );
        for bad in ["att_abc", "file_../x", ""] {
            assert_eq!(check(&[part(None, bad)], &p).unwrap_err().status, 400);
        }
    }

    #[test]
    fn attachments_are_served_as_images_only_when_their_bytes_are_images() {
        assert_eq!(served_media_type("image/png", PNG), "image/png");
        assert_eq!(
            served_media_type("image/png", b"<svg>"),
            "application/octet-stream"
        );
        assert_eq!(
            served_media_type("text/html", b"<b>"),
            "application/octet-stream"
        );
        assert!(is_attachment_id(&attachment_id([7; 16])));
        assert!(!is_attachment_id("att_../x"));
    }
}
