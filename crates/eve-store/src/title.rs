//! Chat titles: the fallback derived from the first message (seed `createFallbackTitle`) and
//! the normalisation applied to a rename.

use crate::limits::{FALLBACK_TITLE_CHARS, MAX_TITLE_CHARS};
use eve_api::chat::DEFAULT_CHAT_TITLE;

/// Trims, collapses every run of whitespace (newlines included) to one space, and cuts to
/// [`FALLBACK_TITLE_CHARS`] on a word boundary with an ellipsis; "New chat" when nothing is
/// left. Text without spaces (Chinese, a long URL) is cut at the character limit.
pub fn fallback_title(message: &str) -> String {
    let collapsed = collapse_whitespace(message);
    if collapsed.is_empty() {
        return DEFAULT_CHAT_TITLE.to_string();
    }
    if collapsed.chars().count() <= FALLBACK_TITLE_CHARS {
        return collapsed;
    }
    let keep = FALLBACK_TITLE_CHARS - 1; // room for the ellipsis
    let head: String = collapsed.chars().take(keep).collect();
    let next_is_space = collapsed.chars().nth(keep) == Some(' ');
    let cut = if next_is_space {
        head.as_str()
    } else {
        // Cut at the last space, unless that would leave less than half the room.
        match head.rfind(' ') {
            Some(at) if head[..at].chars().count() >= keep / 2 => &head[..at],
            _ => head.as_str(),
        }
    };
    format!("{}…", cut.trim_end())
}

/// A rename: whitespace collapsed; empty or longer than [`MAX_TITLE_CHARS`] is an error.
pub fn normalize_title(title: &str) -> Result<String, &'static str> {
    let collapsed = collapse_whitespace(title);
    if collapsed.is_empty() {
        return Err("title must not be empty");
    }
    if collapsed.chars().count() > MAX_TITLE_CHARS {
        return Err("title is too long (at most 200 characters)");
    }
    Ok(collapsed)
}

fn collapse_whitespace(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_blank_message_gives_new_chat() {
        assert_eq!(fallback_title(""), "New chat");
        assert_eq!(fallback_title(" \n\t "), "New chat");
    }

    #[test]
    fn short_message_is_trimmed_and_whitespace_collapsed() {
        assert_eq!(
            fallback_title("  What is\n\n the   weather?  "),
            "What is the weather?"
        );
    }

    #[test]
    fn long_message_is_cut_on_a_word_boundary_with_an_ellipsis() {
        let msg = "Please explain how keyset pagination works in SQLite and why it beats offset pagination for deep pages";
        let title = fallback_title(msg);
        assert!(title.ends_with('…'));
        assert!(title.chars().count() <= FALLBACK_TITLE_CHARS);
        let body = title.trim_end_matches('…');
        assert!(msg.starts_with(body));
        assert_eq!(
            msg.as_bytes()[body.len()],
            b' ',
            "cut falls between words: {title:?}"
        );
    }

    #[test]
    fn long_text_without_spaces_is_cut_at_the_limit() {
        let msg = "数据库迁移".repeat(30);
        let title = fallback_title(&msg);
        assert_eq!(title.chars().count(), FALLBACK_TITLE_CHARS);
        assert!(title.ends_with('…'));
    }

    #[test]
    fn message_of_exactly_the_limit_is_kept_whole() {
        let msg = "a".repeat(FALLBACK_TITLE_CHARS);
        assert_eq!(fallback_title(&msg), msg);
    }

    #[test]
    fn rename_collapses_whitespace_and_rejects_empty_or_too_long() {
        assert_eq!(normalize_title("  My\n chat "), Ok("My chat".into()));
        assert!(normalize_title("   ").is_err());
        assert!(normalize_title(&"x".repeat(MAX_TITLE_CHARS + 1)).is_err());
        assert!(normalize_title(&"x".repeat(MAX_TITLE_CHARS)).is_ok());
    }
}
